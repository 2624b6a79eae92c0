"""Register backward hooks that really fire on ScriptModule subclasses, on released torch.

    from repro.workaround import register_full_backward_hook
    handle = register_full_backward_hook(model, hook, prepend=False)

``Module.register_full_backward_hook`` fails on a ScriptModule subclass only because its
``self._is_full_backward_hook = True`` is forwarded to the scripted module. These functions
do what that method does, but store the flag on the Python wrapper, where
``Module._get_backward_hooks`` reads it. On any other module they call the method itself.

Limits: the flag lives only on this Python object (not in ``torch.jit.save`` output, where
Python hooks are not kept anyway); ``torch.jit.script(module)`` results
(``RecursiveScriptModule``) still refuse hooks by design.
"""

from __future__ import annotations

from collections.abc import Callable

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
