"""Hook scenarios: the whole hook surface of ``nn.Module`` and the global ``register_module_*`` hooks.

The 19 entries registered with ``downstream=True`` mirror the behaviours torch_npu's
``TestScriptModuleHooks`` (test/test_jit_api.py) checks, as described in shared/CONTEXT.md; the rest
cover the legacy hook, forward hooks, ordering across hook kinds, ``prepend``, removal, returned values
and ``incompatible_keys`` edits, as in PyTorch's test/nn/test_module_hooks.py, and hooks on submodules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch

from repro.engine.recorder import Recorder
from repro.engine.scenarios.table import scenario
from repro.vocabulary import Tier


def _times(factor: float) -> Callable[..., tuple]:
    """A hook return value: the first gradient argument scaled by ``factor``."""
    return lambda module, *grads: tuple(g * factor for g in grads[0])


def _load_pre(rec: Recorder, label: str = "pre", edit: Callable | None = None) -> Callable:
    """A load_state_dict pre hook with the 8-argument signature, optionally editing."""

    def hook(
        module: Any,
        state_dict: dict,
        prefix: str,
        local_metadata: Any,
        strict: bool,
        missing: list,
        unexpected: list,
        errors: list,
    ) -> None:
        rec.hook(label)(module, state_dict, prefix, local_metadata, strict, missing, unexpected, errors)
        if edit:
            edit(state_dict)

    return hook


def _zero_all(state_dict: dict) -> None:
    for key in list(state_dict):
        state_dict[key] = torch.zeros_like(state_dict[key])


# --- register_full_backward_hook: the bug -------------------------------------------


@scenario("register_full_backward_hook", "called with grad_input and grad_output", downstream=True)
def _(m: Any, rec: Recorder) -> None:
    m.register_full_backward_hook(rec.hook("backward"))
    rec.backward()


@scenario(
    "register_full_backward_hook",
    "returned grad_input replaces the input gradient",
    tier=Tier.VARIANT,
    requires=("root", "x only"),
)
def _(m: Any, rec: Recorder) -> None:
    m.register_full_backward_hook(rec.hook("backward", returns=_times(0.0)))
    rec.backward()


@scenario("register_full_backward_hook(prepend)", "prepend=True runs before earlier hooks", tier=Tier.VARIANT)
def _(m: Any, rec: Recorder) -> None:
    m.register_full_backward_hook(rec.mark("first registered"))
    m.register_full_backward_hook(rec.mark("prepended"), prepend=True)
    rec.backward()


@scenario("register_full_backward_hook", "handle.remove() stops the hook", tier=Tier.VARIANT)
def _(m: Any, rec: Recorder) -> None:
    handle = m.register_full_backward_hook(rec.mark("backward"))
    rec.backward()
    handle.remove()
    rec.backward()


@scenario(
    "register_full_backward_hook",
    "runs after forward(-pre) and backward-pre hooks",
    "register_forward_pre_hook",
    "register_forward_hook",
    "register_full_backward_pre_hook",
    tier=Tier.VARIANT,
)
def _(m: Any, rec: Recorder) -> None:
    m.register_full_backward_hook(rec.mark("backward"))
    m.register_full_backward_pre_hook(rec.mark("backward pre"))
    m.register_forward_hook(rec.mark("forward"))
    m.register_forward_pre_hook(rec.mark("forward pre"))
    rec.backward()


# --- register_backward_hook (legacy): same flag, same bug ---------------------------


@scenario("register_backward_hook", "called with grad_input and grad_output")
def _(m: Any, rec: Recorder) -> None:
    m.register_backward_hook(rec.hook("backward"))
    rec.backward()


@scenario("register_backward_hook", "handle.remove() stops the hook", tier=Tier.VARIANT)
def _(m: Any, rec: Recorder) -> None:
    handle = m.register_backward_hook(rec.mark("backward"))
    rec.backward()
    handle.remove()
    rec.backward()


# --- register_full_backward_pre_hook (downstream: called, modify, prepend, remove) ---


@scenario("register_full_backward_pre_hook", "called with grad_output", downstream=True, tier=Tier.VARIANT)
def _(m: Any, rec: Recorder) -> None:
    m.register_full_backward_pre_hook(rec.hook("backward pre"))
    rec.backward()


@scenario("register_full_backward_pre_hook", "returned grad_output replaces it (zero grad)", downstream=True)
def _(m: Any, rec: Recorder) -> None:
    m.register_full_backward_pre_hook(rec.hook("backward pre", returns=_times(0.0)))
    rec.backward(rec.input([1.0, 1.0]))


@scenario("register_full_backward_pre_hook(prepend)", "prepend=True runs before earlier hooks", downstream=True)
def _(m: Any, rec: Recorder) -> None:
    m.register_full_backward_pre_hook(rec.mark("first registered"))
    m.register_full_backward_pre_hook(rec.mark("prepended"), prepend=True)
    rec.backward()


@scenario("register_full_backward_pre_hook", "handle.remove() stops the hook", downstream=True)
def _(m: Any, rec: Recorder) -> None:
    handle = m.register_full_backward_pre_hook(rec.mark("backward pre"))
    rec.backward()
    handle.remove()
    rec.backward()


@scenario(
    "register_full_backward_pre_hook",
    "runs after forward-pre and forward hooks",
    "register_forward_pre_hook",
    "register_forward_hook",
    tier=Tier.VARIANT,
)
def _(m: Any, rec: Recorder) -> None:
    m.register_full_backward_pre_hook(rec.mark("backward pre"))
    m.register_forward_hook(rec.mark("forward"))
    m.register_forward_pre_hook(rec.mark("forward pre"))
    rec.backward()


# --- forward hooks -------------------------------------------------------------------


@scenario("register_forward_pre_hook", "called with the input; returned input replaces it")
def _(m: Any, rec: Recorder) -> None:
    m.register_forward_pre_hook(rec.hook("forward pre", returns=_times(2.0)))
    rec.backward()


@scenario("register_forward_pre_hook", "handle.remove() stops the hook", tier=Tier.VARIANT)
def _(m: Any, rec: Recorder) -> None:
    handle = m.register_forward_pre_hook(rec.mark("forward pre"))
    rec.backward()
    handle.remove()
    rec.backward()


@scenario("register_forward_hook", "called with input, output; return replaces output")
def _(m: Any, rec: Recorder) -> None:
    m.register_forward_hook(rec.hook("forward", returns=lambda mod, args, out: out * 3.0))
    rec.backward()


@scenario("register_forward_hook(prepend)", "prepend=True runs before earlier hooks", tier=Tier.VARIANT)
def _(m: Any, rec: Recorder) -> None:
    m.register_forward_hook(rec.mark("first registered"))
    m.register_forward_hook(rec.mark("prepended"), prepend=True)
    rec.backward()


# --- load_state_dict pre/post hooks (downstream: 7 tests) ----------------------------


@scenario(
    "register_load_state_dict_pre_hook",
    "runs before the post hook",
    "register_load_state_dict_post_hook",
    downstream=True,
)
def _(m: Any, rec: Recorder) -> None:
    m.register_load_state_dict_post_hook(rec.mark("post"))
    m.register_load_state_dict_pre_hook(_load_pre(rec))
    m.load_state_dict(m.state_dict())


@scenario(
    "register_load_state_dict_pre_hook",
    "can rewrite the incoming state dict",
    "register_load_state_dict_post_hook",
    downstream=True,
    requires=("own params",),
)
def _(m: Any, rec: Recorder) -> None:
    m.register_load_state_dict_post_hook(lambda mod, keys: rec.note("weight in post hook", mod.weight))
    m.register_load_state_dict_pre_hook(_load_pre(rec, edit=_zero_all))
    m.load_state_dict(m.state_dict())
    rec.note("state dict after load", m.state_dict())


@scenario(
    "register_load_state_dict_pre_hook", "called with all 8 arguments, prefix ''", downstream=True, tier=Tier.VARIANT
)
def _(m: Any, rec: Recorder) -> None:
    m.register_load_state_dict_pre_hook(_load_pre(rec))
    m.load_state_dict(m.state_dict())


@scenario("register_load_state_dict_pre_hook", "receives the module itself", downstream=True, tier=Tier.VARIANT)
def _(m: Any, rec: Recorder) -> None:
    m.register_load_state_dict_pre_hook(rec.module_hook("pre"))
    m.load_state_dict(m.state_dict())


@scenario("register_load_state_dict_pre_hook", "handle.remove() stops the hook", downstream=True)
def _(m: Any, rec: Recorder) -> None:
    handle = m.register_load_state_dict_pre_hook(rec.mark("pre"))
    m.load_state_dict(m.state_dict())
    handle.remove()
    m.load_state_dict(m.state_dict())


@scenario("register_load_state_dict_post_hook", "called with the module and incompatible_keys")
def _(m: Any, rec: Recorder) -> None:
    m.register_load_state_dict_post_hook(rec.hook("post"))
    m.load_state_dict(m.state_dict())


@scenario("register_load_state_dict_post_hook", "receives the module itself", downstream=True, tier=Tier.VARIANT)
def _(m: Any, rec: Recorder) -> None:
    m.register_load_state_dict_post_hook(rec.module_hook("post"))
    m.load_state_dict(m.state_dict())


@scenario("register_load_state_dict_post_hook", "handle.remove() stops the hook", downstream=True)
def _(m: Any, rec: Recorder) -> None:
    handle = m.register_load_state_dict_post_hook(rec.mark("post"))
    m.load_state_dict(m.state_dict())
    handle.remove()
    m.load_state_dict(m.state_dict())


@scenario("register_load_state_dict_post_hook", "clearing incompatible_keys lets strict=True pass", tier=Tier.VARIANT)
def _(m: Any, rec: Recorder) -> None:
    def forgive(module: Any, incompatible_keys: Any) -> None:
        rec.hook("post")(module, incompatible_keys)
        incompatible_keys.missing_keys.clear()
        incompatible_keys.unexpected_keys.clear()

    m.register_load_state_dict_post_hook(forgive)
    partial = {"weight": torch.ones(2, 2), "extra": torch.zeros(1)}
    rec.note("result", m.load_state_dict(partial, strict=True))
    rec.note("state dict after load", m.state_dict())


# --- state_dict pre/post hooks (downstream: 7 tests) ---------------------------------


@scenario("register_state_dict_pre_hook", "runs before the post hook", "register_state_dict_post_hook", downstream=True)
def _(m: Any, rec: Recorder) -> None:
    m.register_state_dict_post_hook(lambda mod, sd, prefix, meta: rec.note("keys in post", list(sd)))
    m.register_state_dict_post_hook(rec.mark("post"))
    m.register_state_dict_pre_hook(rec.mark("pre"))
    m.state_dict()


@scenario("register_state_dict_pre_hook", "called with module, prefix '' and keep_vars", downstream=True)
def _(m: Any, rec: Recorder) -> None:
    m.register_state_dict_pre_hook(rec.hook("pre"))
    m.state_dict()
    m.state_dict(keep_vars=True)


@scenario("register_state_dict_pre_hook", "receives the module itself", downstream=True, tier=Tier.VARIANT)
def _(m: Any, rec: Recorder) -> None:
    m.register_state_dict_pre_hook(rec.module_hook("pre"))
    m.state_dict()


@scenario("register_state_dict_pre_hook", "handle.remove() stops the hook", downstream=True)
def _(m: Any, rec: Recorder) -> None:
    handle = m.register_state_dict_pre_hook(rec.mark("pre"))
    m.state_dict()
    handle.remove()
    m.state_dict()


@scenario("register_state_dict_post_hook", "called with module, dict, prefix '', metadata", downstream=True)
def _(m: Any, rec: Recorder) -> None:
    m.register_state_dict_post_hook(rec.hook("post"))
    m.state_dict()


@scenario("register_state_dict_post_hook", "receives the module itself", downstream=True, tier=Tier.VARIANT)
def _(m: Any, rec: Recorder) -> None:
    m.register_state_dict_post_hook(rec.module_hook("post"))
    m.state_dict()


@scenario("register_state_dict_post_hook", "handle.remove() stops the hook", downstream=True)
def _(m: Any, rec: Recorder) -> None:
    handle = m.register_state_dict_post_hook(rec.mark("post"))
    m.state_dict()
    handle.remove()
    m.state_dict()


@scenario(
    "register_state_dict_post_hook",
    "can edit the returned state dict in place",
    tier=Tier.VARIANT,
    requires=("own params",),
)
def _(m: Any, rec: Recorder) -> None:
    def edit(module: Any, state_dict: Any, prefix: str, local_metadata: Any) -> None:
        state_dict["bias"] = state_dict["bias"] + 1

    m.register_state_dict_post_hook(edit)
    rec.note("state dict", m.state_dict())


# --- the rest of nn.Module's hook surface (PyTorch's test/nn/test_module_hooks.py) ---


@scenario("register_forward_pre_hook(with_kwargs)", "with_kwargs=True: (module, args, kwargs)", tier=Tier.VARIANT)
def _(m: Any, rec: Recorder) -> None:
    m.register_forward_pre_hook(rec.hook("forward pre"), with_kwargs=True)
    rec.backward()


@scenario("register_forward_hook(with_kwargs)", "with_kwargs=True: (module, args, kwargs, output)", tier=Tier.VARIANT)
def _(m: Any, rec: Recorder) -> None:
    m.register_forward_hook(rec.hook("forward"), with_kwargs=True)
    rec.backward()


@scenario(
    "register_forward_hook(always_call)",
    "always_call=True runs when forward raises",
    "register_forward_pre_hook",
    tier=Tier.VARIANT,
)
def _(m: Any, rec: Recorder) -> None:
    def fail(module: Any, args: Any) -> None:
        raise ValueError("a forward pre hook failed")

    m.register_forward_pre_hook(fail)
    m.register_forward_hook(rec.mark("forward (always_call)"), always_call=True)
    m.register_forward_hook(rec.mark("forward"))
    try:
        rec.forward(rec.input())
    except ValueError as err:
        rec.note("forward raised", str(err))


@scenario("register_forward_hook(prepend)", "three hooks, two prepended, over two iterations", tier=Tier.VARIANT)
def _(m: Any, rec: Recorder) -> None:
    m.register_forward_hook(rec.mark("a"))
    m.register_forward_hook(rec.mark("b"), prepend=True)
    m.register_forward_hook(rec.mark("c"))
    m.register_forward_hook(rec.mark("d"), prepend=True)
    rec.backward()
    rec.backward()


@scenario("register_forward_hook", "a hook that removes itself runs once", tier=Tier.VARIANT)
def _(m: Any, rec: Recorder) -> None:
    def once(module: Any, args: Any, output: Any) -> None:
        rec.mark("forward")()
        handle.remove()

    handle = m.register_forward_hook(once)
    rec.backward()
    rec.backward()


@scenario("register_full_backward_hook", "with retain_graph, runs on each backward", tier=Tier.VARIANT)
def _(m: Any, rec: Recorder) -> None:
    m.register_full_backward_hook(rec.hook("backward"))
    out = rec.forward(rec.input()).sum()
    out.backward(retain_graph=True)
    out.backward()


@scenario(
    "register_full_backward_hook",
    "input without requires_grad: grad_input is None",
    tier=Tier.VARIANT,
    requires=("root", "params"),
)
def _(m: Any, rec: Recorder) -> None:
    m.register_full_backward_hook(rec.hook("backward"))
    rec.forward(rec.input().detach()).sum().backward()


@scenario("register_full_backward_pre_hook", "with retain_graph, runs on each backward", tier=Tier.VARIANT)
def _(m: Any, rec: Recorder) -> None:
    m.register_full_backward_pre_hook(rec.hook("backward pre"))
    out = rec.forward(rec.input()).sum()
    out.backward(retain_graph=True)
    out.backward()


@scenario("register_state_dict_pre_hook", "state_dict(prefix='p.', keep_vars=True) reaches it", tier=Tier.VARIANT)
def _(m: Any, rec: Recorder) -> None:
    m.register_state_dict_pre_hook(rec.hook("pre"))
    rec.note("keys", list(m.state_dict(prefix="p.", keep_vars=True)))


@scenario("register_load_state_dict_post_hook", "adding a missing key makes strict=True raise", tier=Tier.VARIANT)
def _(m: Any, rec: Recorder) -> None:
    def insist(module: Any, incompatible_keys: Any) -> None:
        incompatible_keys.missing_keys.append("extra")

    m.register_load_state_dict_post_hook(insist)
    try:
        m.load_state_dict(m.state_dict(), strict=True)
    except RuntimeError as err:  # the message names the class, which differs between the twins
        rec.note("load raised", [type(err).__name__, "Missing key(s)" in str(err), "extra" in str(err)])


@scenario("_register_state_dict_hook", "called with module, dict, prefix, metadata")
def _(m: Any, rec: Recorder) -> None:
    m._register_state_dict_hook(rec.hook("state dict hook"))
    m.state_dict()


@scenario("_register_load_state_dict_pre_hook", "called with the 7 loading arguments")
def _(m: Any, rec: Recorder) -> None:
    m._register_load_state_dict_pre_hook(rec.hook("load pre"))
    m.load_state_dict(m.state_dict())


@scenario(
    "register_forward_hook", "on a submodule (m.linear)", model="child", where="on a submodule", requires=("linear",)
)
def _(m: Any, rec: Recorder) -> None:
    m.linear.register_forward_hook(rec.mark("child forward"))
    rec.backward()


# --- other model shapes: two inputs, a non-tensor input, inside an eager parent ------


def _hook_then_backward(api: str, label: str, name: str, model: str) -> None:
    @scenario(api, name, tier=Tier.VARIANT, model=model)
    def _(m: Any, rec: Recorder) -> None:
        getattr(m, api)(rec.hook(label))
        rec.backward()


for _api, _label, _name, _model in (
    ("register_full_backward_hook", "backward", "two inputs: grad_input holds both gradients", "two inputs"),
    ("register_forward_pre_hook", "forward pre", "two inputs: args holds both", "two inputs"),
    ("register_full_backward_hook", "backward", "a non-tensor input: only tensors get gradients", "non-tensor input"),
    ("register_forward_pre_hook", "forward pre", "a non-tensor input reaches the hook", "non-tensor input"),
):
    _hook_then_backward(_api, _label, _name, _model)


@scenario(
    "register_full_backward_hook",
    "on a ScriptModule subclass inside an eager parent",
    tier=Tier.VARIANT,
    model="in eager parent",
    requires=("inner",),
)
def _(m: Any, rec: Recorder) -> None:
    m.inner.register_full_backward_hook(rec.hook("inner backward"))
    rec.backward()


@scenario(
    "register_forward_hook",
    "on a ScriptModule subclass inside an eager parent",
    tier=Tier.VARIANT,
    model="in eager parent",
    requires=("inner",),
)
def _(m: Any, rec: Recorder) -> None:
    m.inner.register_forward_hook(rec.hook("inner forward"))
    rec.backward()


# --- global module hooks (torch.nn.modules.module.register_module_*) -----------------


@contextmanager
def global_backward_mode_kept() -> Iterator[None]:
    """Put back torch's process-wide full/legacy mode of global backward hooks on exit: removing a
    global hook leaves the mode its registration set, and a later hook of the other kind raises."""
    from torch.nn.modules import module

    mode = getattr(module, "_global_is_full_backward_hook", None)
    try:
        yield
    finally:
        if hasattr(module, "_global_is_full_backward_hook"):
            module._global_is_full_backward_hook = mode


@contextmanager
def _global_hook(register_name: str, hook: Callable) -> Iterator[None]:
    """Register a global module hook for one scenario, then remove it and the process-wide
    full/legacy mode it set, so later scenarios start as a fresh process would."""
    from torch.nn.modules import module

    with global_backward_mode_kept():
        handle = getattr(module, register_name)(hook)
        try:
            yield
        finally:
            handle.remove()


def _global_scenario(register_name: str, label: str, name: str, model: str, tier: Tier = Tier.DEFAULT) -> None:
    @scenario(register_name, name, tier=tier, model=model, requires=())
    def _(m: Any, rec: Recorder) -> None:
        with _global_hook(register_name, rec.module_hook(label)):
            rec.backward()


for _register, _label in (
    ("register_module_forward_pre_hook", "global forward pre"),
    ("register_module_forward_hook", "global forward"),
    ("register_module_full_backward_pre_hook", "global backward pre"),
    ("register_module_full_backward_hook", "global backward"),
    ("register_module_backward_hook", "global legacy backward"),
):
    _global_scenario(_register, _label, "runs for the model and its child", "child")
    _global_scenario(
        _register, _label, "a ScriptModule subclass inside an eager parent", "in eager parent", Tier.VARIANT
    )
    _global_scenario(
        _register, _label, "an eager parent with a torch.jit.script-ed child", "scripted child", Tier.VARIANT
    )


# --- Module.compile -----------------------------------------------------------------


@scenario("compile", "later calls go through torch.compile", tier=Tier.SLOW, requires=("root", "one graph"))
def _(m: Any, rec: Recorder) -> None:
    import torch._dynamo

    def backend(graph_module: Any, example_inputs: Any) -> Any:  # called by dynamo for each graph it compiles
        rec.mark("torch.compile backend")()
        return graph_module.forward

    # What dynamo cached for another run (or the other twin) must not decide this one: after it had tried
    # Module._call_impl on a ScriptModule, the eager twin's Module.compile captured nothing either (measured:
    # the workaround then read "works" with both twins recording no backend call).
    torch._dynamo.reset()
    m.compile(backend=backend)
    rec.backward()
    torch._dynamo.reset()


# --- global registration hooks: they fire while a module is built ---------------------


def _registration_scenario(register_name: str, label: str, model: str) -> None:
    @scenario(register_name, "runs while a new model is built, with each name", model=model, requires=("root",))
    def _(m: Any, rec: Recorder) -> None:
        def hook(module: Any, name: str, value: Any) -> None:
            rec.events.append([label, name, type(value).__name__])

        with _global_hook(register_name, hook):
            type(m)()  # the model's own class: a ScriptModule subclass, or the eager twin


for _register, _label, _model in (
    ("register_module_module_registration_hook", "module registered", "child"),
    ("register_module_parameter_registration_hook", "parameter registered", "flat"),
    ("register_module_buffer_registration_hook", "buffer registered", "flat"),
):
    _registration_scenario(_register, _label, _model)  # flat holds two parameters and a buffer, no child


# --- hooks on a child that is itself a ScriptModule subclass, and the other local hooks on a submodule ---


for _register, _hook in (
    ("register_forward_hook", "forward"),
    ("register_forward_pre_hook", "forward pre"),
    ("register_full_backward_hook", "backward"),
    ("register_full_backward_pre_hook", "backward pre"),
):

    def _child_hooked(m: Any, rec: Recorder, register: str = _register, label: str = f"child {_hook}") -> None:
        getattr(m.inner, register)(rec.mark(label))
        rec.backward()

    scenario(
        _register,
        "on a child that is itself a ScriptModule subclass",  # one default: its bug's own
        tier=Tier.DEFAULT if _register == "register_forward_hook" else Tier.VARIANT,
        model="subclass child",
        where="on a ScriptModule-subclass child",
        requires=("inner",),
    )(_child_hooked)

for _register in (  # every local hook API on a child: each is tried there, not only on the model
    "register_forward_pre_hook",
    "register_full_backward_hook",
    "register_full_backward_pre_hook",
    "register_backward_hook",
    "register_state_dict_pre_hook",
    "register_state_dict_post_hook",
    "_register_state_dict_hook",
    "register_load_state_dict_pre_hook",
    "register_load_state_dict_post_hook",
    "_register_load_state_dict_pre_hook",
):

    def _submodule_hooked(m: Any, rec: Recorder, register: str = _register) -> None:
        getattr(m.linear, register)(rec.mark("submodule hook"))
        rec.backward()
        m.load_state_dict(m.state_dict())  # for the state_dict and load_state_dict hooks

    scenario(
        _register,
        "on a submodule (m.linear)",
        tier=Tier.VARIANT,
        model="child",
        where="on a submodule",
        requires=("linear",),
    )(_submodule_hooked)


@scenario(
    "register_forward_hook(always_call)",
    "always_call: the forward itself raises; the caller catches",
    tier=Tier.DEFAULT,  # its bug's one scenario
    model="raising",
    where="the forward itself raises",
    requires=("raises",),
)
def _(m: Any, rec: Recorder) -> None:
    m.register_forward_hook(rec.mark("forward (always_call)"), always_call=True)
    try:
        rec.forward(rec.input([[-100.0, -100.0], [-100.0, -100.0]]))
    except Exception as err:  # what the caller can catch: the exception's class
        rec.facts["the caller catches"] = type(err).__name__
