"""The rest of ``nn.Module``'s public methods: registration, traversal, conversion, modes, state.

One scenario per method at least (``table.uncovered_module_methods`` fails a test otherwise), each a
variant: the default run keeps the hook APIs and the catalogued bugs. Methods for an accelerator this
machine lacks (``.cuda()``) are ``not run``.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from repro.engine.recorder import Recorder
from repro.engine.scenarios.table import scenario
from repro.vocabulary import Tier


def _forward_and_state(m: Any, rec: Recorder) -> None:
    """What a conversion or mode change must leave as eager leaves it: parameters, buffers, an output."""
    rec.parameters()
    rec.note("output", rec.forward(rec.input().to(next(m.parameters()).dtype)))


for _method, _args in (
    ("double", ()),
    ("float", ()),
    ("half", ()),
    ("bfloat16", ()),
    ("cpu", ()),
    ("type", (torch.float64,)),
    ("to", (torch.float64,)),
    ("requires_grad_", (False,)),
    ("share_memory", ()),
):

    def _converted(m: Any, rec: Recorder, method: str = _method, args: tuple = _args) -> None:
        rec.note("returns the module itself", getattr(m, method)(*args) is m)
        _forward_and_state(m, rec)

    scenario(
        _method,
        "converts every parameter and buffer; the model still runs",
        tier=Tier.VARIANT,
        requires=("root", "params"),
    )(_converted)

for _device in ("cuda", "xpu", "ipu", "mtia"):

    def _moved(m: Any, rec: Recorder, method: str = _device) -> None:
        getattr(m, method)()
        rec.facts["devices"] = sorted({t.device.type for t in [*m.parameters(), *m.buffers()]})

    scenario(
        _device, f"moves every parameter and buffer to the {_device.upper()} device", tier=Tier.VARIANT, device=_device
    )(_moved)


@scenario("to_empty", "allocates every parameter and buffer anew on a device", tier=Tier.VARIANT)
def _(m: Any, rec: Recorder) -> None:
    m.to_empty(device="cpu")
    rec.facts["shapes"] = {name: list(t.shape) for name, t in [*m.named_parameters(), *m.named_buffers()]}


@scenario(
    "train",
    "train(False) and eval() set training on the model and its children",
    "eval",
    tier=Tier.VARIANT,
    model="child",
)
def _(m: Any, rec: Recorder) -> None:
    rec.note("train(False) returns the module", m.train(False) is m)
    rec.facts["after train(False)"] = [mod.training for mod in m.modules()]
    m.train()
    rec.note("eval() returns the module", m.eval() is m)
    rec.facts["after eval()"] = [mod.training for mod in m.modules()]


@scenario("eval", "eval() sets training off on the model and its children", tier=Tier.VARIANT, model="child")
def _(m: Any, rec: Recorder) -> None:
    rec.note("eval() returns the module", m.eval() is m)
    rec.facts["training"] = [mod.training for mod in m.modules()]


@scenario("zero_grad", "after backward, every gradient is None again", tier=Tier.VARIANT, requires=("root", "x only"))
def _(m: Any, rec: Recorder) -> None:
    rec.model(rec.input()).sum().backward()
    m.zero_grad()
    rec.facts["grads"] = {name: p.grad is None for name, p in m.named_parameters()}


for _method in (
    "parameters",
    "named_parameters",
    "buffers",
    "named_buffers",
    "children",
    "named_children",
    "modules",
    "named_modules",
):

    def _listed(m: Any, rec: Recorder, method: str = _method) -> None:
        rec.note(method, list(getattr(m, method)()))

    scenario(_method, "lists what eager lists, in eager's order", tier=Tier.VARIANT, model="child")(_listed)


@scenario(
    "get_parameter",
    "finds a child's parameter by its dotted name",
    "get_buffer",
    "get_submodule",
    tier=Tier.VARIANT,
    model="child",
    requires=("linear",),
)
def _(m: Any, rec: Recorder) -> None:
    rec.note("get_parameter('linear.weight')", m.get_parameter("linear.weight"))
    rec.note("get_buffer('steps')", m.get_buffer("steps"))
    rec.note("get_submodule('linear')", m.get_submodule("linear"))


for _method in ("get_buffer", "get_submodule"):

    def _found(
        m: Any, rec: Recorder, method: str = _method, target: str = "steps" if _method == "get_buffer" else "linear"
    ) -> None:
        rec.note(f"{method}({target!r})", getattr(m, method)(target))

    needs = ("own buffer",) if _method == "get_buffer" else ("linear",)
    scenario(_method, "finds its target by name", tier=Tier.VARIANT, model="child", requires=needs)(_found)


@scenario("apply", "calls the function on every module, children first", tier=Tier.VARIANT, model="child")
def _(m: Any, rec: Recorder) -> None:
    rec.note("returns the module itself", m.apply(lambda module: rec.events.append([rec.summary(module)])) is m)


@scenario("state_dict", "holds every parameter and buffer", tier=Tier.VARIANT, model="child")
def _(m: Any, rec: Recorder) -> None:
    rec.note("state_dict", m.state_dict())


@scenario(
    "state_dict",
    "leaves out a buffer registered with persistent=False",
    "load_state_dict",
    model="non-persistent buffer child",
    requires=("non-persistent buffer",),
)
def _(m: Any, rec: Recorder) -> None:
    rec.facts["buffers"] = sorted(name for name, _ in m.named_buffers())
    rec.facts["state_dict keys"] = sorted(m.state_dict())
    m.load_state_dict(m.state_dict())
    rec.note("output after a state_dict round trip", m(rec.input()))


@scenario(
    "load_state_dict", "loads new values; the model computes with them", tier=Tier.VARIANT, requires=("root", "params")
)
def _(m: Any, rec: Recorder) -> None:
    rec.note("incompatible keys", list(m.load_state_dict({k: v * 2 for k, v in m.state_dict().items()})))
    _forward_and_state(m, rec)


@scenario("forward", "calling forward directly gives the output", tier=Tier.VARIANT, requires=("root", "x only"))
def _(m: Any, rec: Recorder) -> None:
    rec.note("output", m.forward(rec.input()))
    rec.types["forward"] = type(m.forward).__name__  # a compiled forward is a ScriptMethod, by design


@scenario(
    "forward",
    "an exception raised in forward reaches the caller as its own class",
    tier=Tier.VARIANT,
    model="raising",
    requires=("raises",),
)
def _(m: Any, rec: Recorder) -> None:
    try:
        rec.forward(rec.input([[-100.0, -100.0], [-100.0, -100.0]]))
    except Exception as err:  # what the caller can catch: the exception's class
        rec.facts["the caller catches"] = type(err).__name__


@scenario("extra_repr", "the same extra representation", tier=Tier.VARIANT)
def _(m: Any, rec: Recorder) -> None:
    rec.note("extra_repr", m.extra_repr())


@scenario(
    "get_extra_state",
    "the default get_extra_state and set_extra_state refuse alike",
    "set_extra_state",
    tier=Tier.VARIANT,
)
def _(m: Any, rec: Recorder) -> None:
    rec.attempt("get_extra_state()", m.get_extra_state)
    rec.attempt("set_extra_state(1)", lambda: m.set_extra_state(1))


@scenario("set_extra_state", "the default set_extra_state refuses alike", tier=Tier.VARIANT)
def _(m: Any, rec: Recorder) -> None:
    rec.attempt("set_extra_state(1)", lambda: m.set_extra_state(1))


for _method in ("add_module", "register_module"):

    def _added(m: Any, rec: Recorder, method: str = _method) -> None:
        getattr(m, method)("extra", nn.Linear(2, 2))
        rec.note("children", [name for name, _ in m.named_children()])

    scenario(_method, "adds a child after __init__", tier=Tier.VARIANT, where="after __init__")(_added)


@scenario("register_parameter", "adds a parameter after __init__", tier=Tier.VARIANT, where="after __init__")
def _(m: Any, rec: Recorder) -> None:
    m.register_parameter("extra", nn.Parameter(torch.ones(1)))
    rec.note("parameters", [name for name, _ in m.named_parameters()])


@scenario("register_buffer", "adds a buffer after __init__", where="after __init__")  # its bug's default
def _(m: Any, rec: Recorder) -> None:
    m.register_buffer("extra", torch.ones(1))
    rec.note("state_dict", m.state_dict())


# Each addition in its other variants: an existing name, and on a child (a refusal is judged in every
# variant of its operation, not only the one it was found with).
@scenario(
    "register_parameter",
    "adds a parameter under an existing name",
    tier=Tier.VARIANT,
    where="an existing name",
    requires=("own params",),
)
def _(m: Any, rec: Recorder) -> None:
    m.register_parameter("weight", nn.Parameter(torch.ones(2, 2)))
    rec.note("output", rec.forward(rec.input()))


@scenario(
    "register_buffer",
    "adds a buffer under an existing name",
    tier=Tier.VARIANT,
    where="an existing name",
    requires=("own buffer",),
)
def _(m: Any, rec: Recorder) -> None:
    m.register_buffer("steps", torch.full((1,), 3.0))
    rec.note("state_dict", m.state_dict())


def _state_dict(m: Any) -> dict:
    return m.state_dict()


def _parameter_names(m: Any) -> list[str]:
    return [name for name, _ in m.named_parameters()]


def _module_names(m: Any) -> list[str]:
    return [name for name, _ in m.named_modules()]


for _method, _what, _value, _key, _observed in (
    ("register_buffer", "a buffer", lambda: torch.ones(1), "state_dict", _state_dict),
    ("register_parameter", "a parameter", lambda: nn.Parameter(torch.ones(1)), "parameters", _parameter_names),
    ("add_module", "a child", nn.Identity, "modules", _module_names),
):

    def _added_to_child(
        m: Any, rec: Recorder, method: str = _method, value: Any = _value, key: str = _key, observed: Any = _observed
    ) -> None:
        getattr(m.linear, method)("extra", value())
        rec.note(key, observed(m))

    scenario(
        _method,
        f"adds {_what} to a child after __init__",
        tier=Tier.VARIANT,
        model="child",
        where="on a child",
        requires=("linear",),
    )(_added_to_child)


@scenario(
    "register_buffer(persistent)",
    "persistent=False keeps a buffer out of state_dict",
    tier=Tier.VARIANT,
    where="persistent=False",
)
def _(m: Any, rec: Recorder) -> None:
    m.register_buffer("extra", torch.ones(1), persistent=False)
    rec.note("state_dict", m.state_dict())


@scenario(
    "set_submodule",
    "replaces a child with a new eager module",
    tier=Tier.VARIANT,
    model="child",
    where="replacing a child",
    requires=("linear",),
)
def _(m: Any, rec: Recorder) -> None:
    m.set_submodule("linear", nn.Linear(2, 2))
    rec.note("children", [name for name, _ in m.named_children()])
