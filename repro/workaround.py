"""What users can do today about each catalogued bug, where a function can do it.

    from repro.workaround import register_full_backward_hook
    handle = register_full_backward_hook(model, hook, prepend=False)

Each bug's catalogue module names its workaround (one of these functions, or a change to the
user's model such as a plain Python ``forward``), and ``repro.proof`` proves it by running the
bug's whole scope with it in force against the eager twin. Where a bug has none, its module says
what was tried.

``Module.register_full_backward_hook`` fails on a ScriptModule subclass only because its
``self._is_full_backward_hook = True`` is forwarded to the scripted module. The two
registration functions do what that method does, but store the flag on the Python wrapper, where
``Module._get_backward_hooks`` reads it. On any other module they call the method itself.
``deepcopy`` copies the wrapper with its hooks, its parameters the copy's own; ``shallow_copy``
gives the copy its own training mode; ``allow_global_backward_hooks`` gives scripted modules the
three methods ``Module._call_impl`` needs when a global backward hook is registered.

Limits: state kept on the Python wrapper is not in ``torch.jit.save`` output (Python hooks are not
kept there anyway); ``torch.jit.script(module)`` results (``RecursiveScriptModule``) still refuse
hooks by design.
"""

from __future__ import annotations

import copy
import functools
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import torch
from torch.utils.hooks import RemovableHandle

from repro.source_checks import FLAG

MIXED = (
    "Cannot use both regular backward hooks and full backward hooks on a single Module. Please use only one of them."
)


def register_full_backward_hook(module: torch.nn.Module, hook: Callable, *, prepend: bool = False) -> RemovableHandle:
    """``module.register_full_backward_hook(hook, prepend=prepend)`` that also works on ScriptModule subclasses."""
    if not _is_scripted_subclass(module):
        return module.register_full_backward_hook(hook, **({"prepend": True} if prepend else {}))
    return _register(module, hook, full=True, prepend=prepend)


def register_backward_hook(module: torch.nn.Module, hook: Callable) -> RemovableHandle:
    """The legacy ``module.register_backward_hook(hook)``, also on ScriptModule subclasses."""
    if not _is_scripted_subclass(module):
        return module.register_backward_hook(hook)
    return _register(module, hook, full=False, prepend=False)


def _is_scripted_subclass(module: torch.nn.Module) -> bool:
    return isinstance(module, torch.jit.ScriptModule) and "_actual_script_module" in module.__dict__


def _register(module: torch.nn.Module, hook: Callable, *, full: bool, prepend: bool) -> RemovableHandle:
    if module.__dict__.get(FLAG) is (not full):
        raise RuntimeError(MIXED)
    object.__setattr__(module, FLAG, full)  # on the wrapper: where Module._get_backward_hooks looks
    handle = RemovableHandle(module._backward_hooks)
    module._backward_hooks[handle.id] = hook
    if prepend:
        # Module's hook dicts are OrderedDicts; torch's stubs annotate them as plain dict
        module._backward_hooks.move_to_end(handle.id, last=False)  # type: ignore[attr-defined]
    return handle


# What Module._call_impl calls on every module once a global backward hook is registered, and
# RecursiveScriptModule stubs with methods that raise.
CALL_IMPL_NEEDS = ("_get_backward_hooks", "_get_backward_pre_hooks", "_maybe_warn_non_full_backward_hook")


class Restore:
    """Undoes a process-wide workaround: ``.remove()``, or the end of a ``with`` block."""

    def __init__(self, undo: list[Callable[[], None]]) -> None:
        self._undo = undo

    def remove(self) -> None:
        while self._undo:
            self._undo.pop()()

    def __enter__(self) -> Restore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


_ALLOWED: list[Callable[[], None]] = []  # what undoes the methods given, while any allowance is in force
_HOLDERS = [0]  # how many allowances are in force


def allow_global_backward_hooks() -> Restore:
    """Let global module backward hooks run through scripted modules called from Python (a plain
    ``forward``'s children, a ``torch.jit.script``-ed child) instead of raising: their class gets
    ``Module``'s own versions of the methods ``Module._call_impl`` asks for. Several may be in force,
    and undone in any order: TorchScript's own methods come back when the last one is undone."""
    if _HOLDERS[0] == 0:
        owner = torch.jit.RecursiveScriptModule
        _ALLOWED[:] = [
            _set(owner, name, getattr(torch.nn.Module, name))
            for name in CALL_IMPL_NEEDS
            if hasattr(torch.nn.Module, name)
        ]
    _HOLDERS[0] += 1
    return Restore([_release])


def _release() -> None:
    _HOLDERS[0] -= 1
    if _HOLDERS[0] == 0:
        while _ALLOWED:
            _ALLOWED.pop()()


def deepcopy(module: torch.nn.Module, memo: dict[int, Any] | None = None) -> torch.nn.Module:
    """``copy.deepcopy(module)`` whose parameters are the copy's own leaves, and that keeps every
    ScriptModule subclass in it, the root or a child of an eager or a compiled module (its class, hooks
    and Python ``forward``): a subclass's wrapper attributes are deep-copied as ``nn.Module``'s are, the compiled
    module by its own ``__deepcopy__``. Call it in place of ``copy.deepcopy`` on any module; as a class
    attribute it is the class's ``__deepcopy__``: ``__deepcopy__ = repro.workaround.deepcopy``."""
    memo = {} if memo is None else memo
    if id(module) in memo:  # reached twice (a shared child): one copy, as copy.deepcopy makes
        copied: torch.nn.Module = memo[id(module)]
        return copied
    if not isinstance(module, torch.jit.ScriptModule):  # an eager model: its compiled parts by this function
        for part in _outermost_compiled(module):
            deepcopy(part, memo)
    if _is_scripted_subclass(module):
        clone = type(module).__new__(type(module))
        memo[id(module)] = clone
        for name, value in module.__dict__.items():
            clone.__dict__[name] = copy.deepcopy(value, memo)
        _kept_subclass_children(module, clone.__dict__["_actual_script_module"], memo)
    elif getattr(type(module), "__deepcopy__", None) is deepcopy:  # copy.deepcopy would come back here
        clone = _as_any_object(module, lambda state: copy.deepcopy(state, memo), memo)
    else:
        clone = copy.deepcopy(module, memo)
        if isinstance(clone, torch.jit.RecursiveScriptModule):  # torch.jit.script's: its children too
            _kept_subclass_children(module, clone, memo)
    _made_parameters(clone)
    return clone


def _outermost_compiled(module: torch.nn.Module) -> Iterator[torch.nn.Module]:
    """The ScriptModules inside an eager module with no ScriptModule between them and it: copied first
    by ``deepcopy`` (``copy.deepcopy`` then finds each copy in the memo), since their own
    ``__deepcopy__`` makes a subclass a bare compiled module."""
    for child in module.children():
        if isinstance(child, torch.jit.ScriptModule):
            yield child
        else:
            yield from _outermost_compiled(child)


def _kept_subclass_children(module: torch.nn.Module, compiled: torch.nn.Module, memo: dict[int, Any]) -> None:
    """A compiled module's copy (``compiled``) holds a bare compiled copy of each child: a child that is a
    ScriptModule subclass becomes a copy of that subclass (its class, hooks and Python methods), around
    the compiled copy (``memo`` maps the child's compiled module to it), as ``nn.Module``'s copy keeps
    its children; the children of a compiled child are looked at in turn."""
    for name, child in module.named_children():
        if _is_scripted_subclass(child):
            memo[id(child.__dict__["_actual_script_module"])] = getattr(compiled, name)
            compiled._modules[name] = deepcopy(child, memo)
        elif isinstance(child, torch.jit.RecursiveScriptModule):
            _kept_subclass_children(child, getattr(compiled, name), memo)


def _made_parameters(module: torch.nn.Module) -> None:
    """A compiled module's copy clones its tensors with their autograd history (``grad_fn``
    CloneBackward0) and as plain tensors: its parameters are not leaves, so backward through the copy
    would fill the original's gradients, and not ``nn.Parameter``, which ``torch.export`` refuses. Each
    becomes a parameter of the copy's own, as ``nn.Parameter.__deepcopy__`` makes; one that two names
    share stays shared."""
    made: dict[int, tuple[torch.Tensor, torch.nn.Parameter]] = {}  # the copy's tensor kept: its id stays its own
    for qualified, param in module.named_parameters(remove_duplicate=False):
        if isinstance(param, torch.nn.Parameter) and param.is_leaf:
            continue
        if id(param) not in made:
            made[id(param)] = (param, torch.nn.Parameter(param.detach(), requires_grad=param.requires_grad))
        *path, name = qualified.split(".")
        setattr(functools.reduce(getattr, path, module), name, made[id(param)][1])  # no get_submodule on compiled


def shallow_copy(module: torch.nn.Module) -> torch.nn.Module:
    """``copy.copy(module)`` whose training mode is its own, as ``nn.Module``'s copy's is. As ``nn.Module``'s
    copy does, it shares everything else with the original: hooks, parameters, buffers and children, a
    parameter re-assigned on either included (both hold the one compiled module). Its class is a subclass
    of the original's, of the same name, made once per class: it keeps ``training`` on the copy and
    puts it on the compiled module for the length of each call of the copy. As a class attribute it is
    the class's ``__copy__``: ``__copy__ = repro.workaround.shallow_copy``. Call the copy, not its
    ``forward``; and not while the original runs in another thread. A ``torch.jit.script``-ed module's
    copy is its own ``copy.copy`` (a compiled copy with its own ``training``) holding the original's
    children, as ``nn.Module``'s copy does (``copy.copy`` alone makes a ScriptModule subclass child a bare
    compiled module; sharing the compiled module would share ``training``)."""
    if isinstance(module, torch.jit.RecursiveScriptModule):
        compiled = copy.copy(module)
        for name, child in module.named_children():
            compiled._modules[name] = child
        return compiled
    if not _is_scripted_subclass(module):
        return _as_any_object(module, dict)
    own = _own_training_class(type(module))
    clone = own.__new__(own)
    clone.__dict__.update(module.__dict__)
    clone.__dict__["training"] = module.training
    return clone


def _as_any_object(
    module: torch.nn.Module, state: Callable[[dict[str, Any]], dict[str, Any]], memo: dict[int, Any] | None = None
) -> torch.nn.Module:
    """What ``copy.copy`` (``state``: ``dict``) or ``copy.deepcopy`` does to a module whose class has no
    ``__copy__`` of its own: its class's ``__new__``, then ``__setstate__`` of the (copied) ``__dict__``.
    Never ``copy.copy`` itself: a class whose ``__copy__`` is this function (an ``nn.Module`` under
    ``PYTORCH_JIT=0``, where ``ScriptModule`` is one) would come back here for ever."""
    clone = type(module).__new__(type(module))
    if memo is not None:
        memo[id(module)] = clone
    clone.__setstate__(state(dict(module.__dict__)))
    return clone


_OWN_TRAINING: dict[type, type[torch.nn.Module]] = {}


def _own_training_class(cls: type[torch.nn.Module]) -> type[torch.nn.Module]:
    """``cls``'s subclass whose instances keep their own ``training`` (once per class; a copy's copy
    shares its class)."""
    base = cls.__dict__.get("_training_kept_for", cls)
    if base not in _OWN_TRAINING:
        namespace = {
            "__setattr__": _set_own_training,
            "__call__": _call_in_own_mode,
            "_training_kept_for": base,
            "__module__": base.__module__,
            "__qualname__": base.__qualname__,
        }
        _OWN_TRAINING[base] = type(base)(base.__name__, (base,), namespace)
    return _OWN_TRAINING[base]


def _set_own_training(self: Any, name: str, value: Any) -> None:
    """The copy's ``__setattr__``: ``training`` on the copy, anything else as its class sets it."""
    if name == "training":
        object.__setattr__(self, name, value)
    else:
        super(type(self), self).__setattr__(name, value)


def _call_in_own_mode(self: Any, *args: Any, **kwargs: Any) -> Any:
    """The copy's ``__call__``: the compiled module (shared with the original) in the copy's mode."""
    compiled = self.__dict__["_actual_script_module"]
    before = compiled.training
    compiled.training = self.training
    try:
        return super(type(self), self).__call__(*args, **kwargs)
    finally:
        compiled.training = before


@contextmanager
def replaced(owner: object, name: str, value: object) -> Iterator[None]:
    """``owner.name = value`` until the block ends, then what was there before (or nothing)."""
    undo = _set(owner, name, value)
    try:
        yield
    finally:
        undo()


def _set(owner: object, name: str, value: object) -> Callable[[], None]:
    """``owner.name = value``, and the function that puts back what was there (or nothing)."""
    missing = object()
    before = owner.__dict__.get(name, missing)
    setattr(owner, name, value)
    return lambda: delattr(owner, name) if before is missing else setattr(owner, name, before)


@contextmanager
def routed(*names: str) -> Iterator[None]:
    """Until the block ends, each ``nn.Module`` method in ``names`` is, on every ScriptModule subclass, this
    module's function for it (``copy.deepcopy``: on every module, ``deepcopy``): what a user does by
    calling the function, applied to code that calls the method (the scenarios), as ``repro.proof``
    needs."""
    with ExitStack() as stack:
        for name in names:
            stack.enter_context(
                _deepcopy_routed() if name == "copy.deepcopy" else replaced(torch.jit.ScriptModule, name, ROUTES[name])
            )
        yield


@contextmanager
def _deepcopy_routed() -> Iterator[None]:
    """``copy.deepcopy`` of a module is ``deepcopy`` until the block ends; the copies that
    ``copy.deepcopy`` and ``deepcopy`` make inside one call (of a dict, a tensor) stay the standard
    library's."""
    original, inside = copy.deepcopy, threading.local()

    def call(value: Any, memo: dict[int, Any] | None = None, *rest: Any) -> Any:
        if getattr(inside, "copying", False):
            return original(value, memo, *rest)
        inside.copying = True
        try:
            return deepcopy(value, memo) if isinstance(value, torch.nn.Module) else original(value, memo, *rest)
        finally:
            inside.copying = False

    with replaced(copy, "deepcopy", call):
        yield


ROUTES: dict[str, Callable[..., Any]] = {
    "register_full_backward_hook": register_full_backward_hook,
    "register_backward_hook": register_backward_hook,
    "__deepcopy__": deepcopy,
    "__copy__": shallow_copy,
}
