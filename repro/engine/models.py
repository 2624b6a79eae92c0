"""The models under test: the shapes the scenarios run on, each as an eager ``nn.Module`` twin and
as the ScriptModule the oracle compares with it.

A shape (``MODELS``) is an eager class whose ``forward`` the ScriptModule side reuses: a new
``torch.jit.ScriptModule`` subclass per call of ``subject_class`` takes that forward either
compiled (``@torch.jit.script_method``, the documented style) or plain (torch_npu's tests' style).
The compiled stub is made once per shape, so a fresh class costs no source parsing. All share
fixed, exactly representable weights (and one buffer), so gradients compare exactly.

Defining a ``script_method`` calls ``torch.jit.script_method``, which warns (and may one day
raise): the stubs are made on first use, inside the oracle's warning capture.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from itertools import cycle, islice

import torch
import torch.nn.functional as F
from torch import nn

STYLES = ("script_method", "plain_forward")
SCRIPTED = "torch.jit.script"  # the only style of a scripted child: torch.jit.script makes it, not a subclass
INSTANCES = ("first", "later")  # a fresh class's first instance, and an instance of a class already built


@dataclass(frozen=True)
class Size:
    """The input's batch and the model's features. Scenarios run at 2 x 2; a workaround's proof also
    runs where the two differ and where both are 1, since a wrong gradient can pass checkpoint's
    shape checks only where shapes happen to agree."""

    batch: int = 2
    features: int = 2

    def __str__(self) -> str:
        return f"{self.batch}x{self.features}"


SIZE = Size()
# Where a workaround is proven: batch and features equal, different, and both 1 (repro.proof).
SIZES = (SIZE, Size(3, 2), Size(1, 1))


def _values(pool: list[float], rows: int, columns: int) -> list[list[float]]:
    """``rows`` x ``columns`` exactly representable numbers taken in turn from ``pool``: at 2 x 2 the
    weights, bias and input every scenario was written with."""
    flat = list(islice(cycle(pool), rows * columns))
    return [flat[r * columns : (r + 1) * columns] for r in range(rows)]


def weight(features: int) -> list[list[float]]:
    return _values([1.0, -2.0, 0.5, 3.0, -1.5, 0.25, 2.0, -0.5, 1.5], features, features)


def bias(features: int) -> list[float]:
    return _values([0.25, -1.0, 0.5], 1, features)[0]


def inputs(size: Size) -> list[list[float]]:
    """The input ``Recorder.input`` makes at ``size`` (``INPUT`` at 2 x 2)."""
    return _values([1.0, 2.0, -3.0, 0.5, -1.5, 2.5, 0.75, -0.25, 1.25], size.batch, size.features)


def _own_layer(module: nn.Module, features: int) -> None:
    """The layer's parameters on the module itself: the cheapest model TorchScript compiles."""
    module.weight = nn.Parameter(torch.tensor(weight(features)))
    module.bias = nn.Parameter(torch.tensor(bias(features)))
    module.register_buffer("steps", torch.zeros(1))  # a buffer, for the buffer-registration hook


def _child_layer(module: nn.Module, features: int) -> None:
    """The layer as an ``nn.Linear`` child: what global hooks and submodule hooks need."""
    module.linear = nn.Linear(features, features)
    with torch.no_grad():
        module.linear.weight.copy_(torch.tensor(weight(features)))
        module.linear.bias.copy_(torch.tensor(bias(features)))
    module.register_buffer("steps", torch.zeros(1))


class _Built(nn.Module):
    """An eager model made by its ``parts`` function (a ``Callable[[nn.Module, int], None]``: the
    module and its features), which the ScriptModule side's ``__init__`` calls too. No class
    annotation says so, nor types the attributes ``parts`` sets: ``torch.jit.script`` reads a
    class's annotations, and torch 1.13.1 fails on a string one (``from __future__ import
    annotations``). Nor can a ``# type: ignore`` comment be put in a ``forward``: TorchScript reads
    ``# type:`` comments as signatures (pyproject.toml's mypy section names the error codes this
    module's forwards raise instead)."""

    def __init__(self, features: int = SIZE.features) -> None:
        super().__init__()
        self.parts(self, features)


class Flat(_Built):
    parts = staticmethod(_own_layer)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.weight, self.bias)


class WithChild(_Built):
    parts = staticmethod(_child_layer)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x)


class TwoInputs(Flat):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.weight, self.bias) * y


class NonTensorInput(Flat):
    def forward(self, x: torch.Tensor, scale: float) -> torch.Tensor:
        return F.linear(x, self.weight, self.bias) * scale


class Raising(Flat):
    """Raises inside ``forward`` (compiled, in the script_method style) for an input summing below -100."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if bool(x.sum() < -100.0):
            raise ValueError("forward refuses an input summing below -100")
        return F.linear(x, self.weight, self.bias)


def _scripted_if(module: nn.Module, shape: str, features: int) -> nn.Module:
    """A ``shape`` model as a child of ``module``: on the ScriptModule side itself a ScriptModule
    subclass (``script_method`` style), made before the parent is compiled, as users nest their own
    ScriptModule classes; on the eager side the eager class. Each parent class has its own child
    class, as a user's model class names its child's: a parent's later instance holds a later
    instance of its child's class."""
    if not isinstance(module, torch.jit.ScriptModule):
        return MODELS[shape].eager(features)
    if type(module) not in _CHILD_CLASSES:
        _CHILD_CLASSES[type(module)] = fresh_class(shape, "script_method", features)
    return _CHILD_CLASSES[type(module)]()


def _subclass_child(module: nn.Module, features: int) -> None:
    """A ``Flat`` child, a ScriptModule subclass on the ScriptModule side."""
    module.inner = _scripted_if(module, "flat", features)


class WithSubclassChild(_Built):
    parts = staticmethod(_subclass_child)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inner(x)


class ChildFirst(WithChild):
    """A forward that calls its child first, then eager ops."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x) * 2.0 + 1.0


class ChildBetween(WithChild):
    """A forward that calls its child between eager ops."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.linear(x * 0.5)) + 1.0


class ChildLast(WithChild):
    """A forward that calls its child last, after eager ops."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x * 2.0 - 1.0)


def _several_children(module: nn.Module, features: int) -> None:
    """Two ``nn.Linear`` children around an ``nn.ReLU``: hooks per child, in call order."""
    _child_layer(module, features)
    module.act = nn.ReLU()
    module.head = nn.Linear(features, features)
    with torch.no_grad():
        module.head.weight.copy_(torch.tensor(weight(features)).t())
        module.head.bias.copy_(torch.tensor(bias(features)))


class SeveralChildren(_Built):
    parts = staticmethod(_several_children)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.act(self.linear(x)))


def _middle(module: nn.Module, features: int) -> None:
    """The second level of ``Nested``: a ScriptModule subclass holding a ``WithChild`` subclass."""
    module.inner = _scripted_if(module, "child", features)


class Middle(_Built):
    parts = staticmethod(_middle)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inner(x)


def _nested(module: nn.Module, features: int) -> None:
    """Three ScriptModule subclasses deep (on the ScriptModule side): root -> middle -> child -> Linear."""
    module.inner = _scripted_if(module, "two deep", features)


class Nested(_Built):
    parts = staticmethod(_nested)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inner(x)


def _buffers_only(module: nn.Module, features: int) -> None:
    """Buffers and no parameters: the only gradient is the input's."""
    module.register_buffer("scale", torch.tensor(weight(features)))
    module.register_buffer("steps", torch.zeros(1))


class BuffersOnly(_Built):
    parts = staticmethod(_buffers_only)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.scale + self.steps


class Scaling(nn.Module):
    """An eager layer scaling its input by a buffer registered with ``persistent=False`` (a running
    statistic a checkpoint leaves out): ``state_dict`` holds none of it."""

    def __init__(self, features: int) -> None:
        super().__init__()
        self.register_buffer("scale", torch.full((features,), 0.5), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.scale


def _non_persistent_child(module: nn.Module, features: int) -> None:
    """An ``nn.Linear`` child and an eager ``Scaling`` child (a ScriptModule subclass refuses a
    non-persistent buffer of its own; one its eager child holds is compiled with it)."""
    _child_layer(module, features)
    module.scaling = Scaling(features)


class NonPersistentChild(_Built):
    parts = staticmethod(_non_persistent_child)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.scaling(self.linear(x))


class EagerParent(nn.Module):
    """An eager model holding the model under test as its child ``inner``."""

    def __init__(self, inner: nn.Module) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inner(x)


# The hooks a model registers in its own ``__init__``: typed so that TorchScript compiles them with a
# ``script_method`` forward (torch.jit.script compiles the hooks a module has when it is compiled),
# and seen through the output they change, since a hook registered there cannot reach a recorder;
# torch.jit.save's scenarios register them after construction too.
def shift_input(module: nn.Module, args: tuple[torch.Tensor]) -> tuple[torch.Tensor]:
    return (args[0] + 1.0,)


def double_output(module: nn.Module, args: tuple[torch.Tensor], output: torch.Tensor) -> torch.Tensor:
    return output * 2.0


def _hooks_before_children(module: nn.Module, features: int) -> None:
    """A forward hook and pre-hook registered in ``__init__`` before the child is set."""
    module.register_forward_pre_hook(shift_input)
    module.register_forward_hook(double_output)
    _child_layer(module, features)


def _hooks_after_children(module: nn.Module, features: int) -> None:
    """The same hooks, registered in ``__init__`` after the child is set."""
    _child_layer(module, features)
    module.register_forward_pre_hook(shift_input)
    module.register_forward_hook(double_output)


class HookedBeforeChildren(WithChild):
    parts = staticmethod(_hooks_before_children)


class HookedAfterChildren(WithChild):
    parts = staticmethod(_hooks_after_children)


@dataclass(frozen=True)
class Model:
    """One shape: its eager class, what it offers a scenario (``traits``), the further forward
    arguments after ``x``, and where the model under test sits (``""``: it is the model; ``"in eager
    parent"``: ``m.inner`` of an eager parent; ``"scripted child"``: ``m.inner`` is ``torch.jit.script``
    of the eager class, in style ``SCRIPTED``)."""

    eager: type[_Built]
    traits: frozenset[str]
    extra: Callable[[str, int], tuple] = lambda device, features: ()  # made anew for each call
    placement: str = ""
    classes: int = 1  # the classes of its own TorchScript compiles for each run (nested subclasses: more)


# What a shape offers a scenario body; a scenario ``requires`` some, and runs on every shape offering them.
TRAITS = {
    "x only": "its forward takes the input alone",
    "params": "it has parameters",
    "own params": "its weight and bias are its own parameters (m.weight)",
    "own buffer": "its buffer steps is its own (m.steps)",
    "linear": "an nn.Linear child named linear (m.linear)",
    "inner": "a child named inner that holds the model's layers (m.inner)",
    "root": "the model under test is the root the scenario builds",
    "raises": "its forward raises for an input summing below -100",
    "one graph": "torch.compile captures its forward without a graph break (no branch on a tensor's value)",
    # Only scenarios that require one of these run on such a shape: its construction is the subject.
    "hooked in __init__": "its __init__ registers a pre-hook adding 1 to x and a forward hook doubling the output",
    "non-persistent buffer": "a child holds a buffer registered with persistent=False",
}
ONLY_WHEN_REQUIRED = frozenset({"hooked in __init__", "non-persistent buffer"})
_FLAT = frozenset({"x only", "params", "own params", "own buffer", "root", "one graph"})
_CHILD = frozenset({"x only", "params", "own buffer", "linear", "root", "one graph"})
_INNER = frozenset({"x only", "params", "inner", "one graph"})
_TWO = lambda device, features: (  # noqa: E731
    torch.tensor(_values([2.0, -1.0, 0.5], 1, features), device=device, requires_grad=True),
)

MODELS: dict[str, Model] = {
    "flat": Model(Flat, _FLAT),
    "child": Model(WithChild, _CHILD),
    "child first": Model(ChildFirst, _CHILD),
    "child between": Model(ChildBetween, _CHILD),
    "child last": Model(ChildLast, _CHILD),
    "several children": Model(SeveralChildren, _CHILD),
    "buffers only": Model(BuffersOnly, frozenset({"x only", "own buffer", "root", "one graph"})),
    "two inputs": Model(TwoInputs, _FLAT - {"x only"}, _TWO),
    "non-tensor input": Model(NonTensorInput, _FLAT - {"x only"}, lambda device, features: (0.5,)),
    "in eager parent": Model(Flat, _INNER, placement="in eager parent"),
    "in eager parent, with child": Model(WithChild, _INNER, placement="in eager parent"),
    "scripted child": Model(Flat, _INNER, placement="scripted child"),
    "subclass child": Model(WithSubclassChild, _INNER | {"root"}, classes=2),
    "two deep": Model(Middle, _INNER | {"root"}, classes=2),
    "three deep": Model(Nested, _INNER | {"root"}, classes=3),
    "raising": Model(Raising, _FLAT - {"one graph"} | {"raises"}),
    "hooked in __init__, before children": Model(HookedBeforeChildren, frozenset({"x only", "hooked in __init__"})),
    "hooked in __init__, after children": Model(HookedAfterChildren, frozenset({"x only", "hooked in __init__"})),
    "non-persistent buffer child": Model(NonPersistentChild, frozenset({"x only", "params", "non-persistent buffer"})),
}


def shapes_offering(traits: tuple[str, ...]) -> tuple[str, ...]:
    """Every shape a scenario that ``requires`` these traits can be built on."""
    assert set(traits) <= set(TRAITS), traits
    return tuple(
        shape
        for shape, model in MODELS.items()
        if model.traits >= set(traits) and model.traits & ONLY_WHEN_REQUIRED <= set(traits)
    )


_STUBS: dict[type, object] = {}
_SERIAL = itertools.count()
_CHILD_CLASSES: dict[type, type] = {}  # a parent class -> its child's class


def _compiled_forward(eager: type[nn.Module]) -> object:
    """``eager.forward`` as a ``script_method`` stub, made once (it parses the source)."""
    if eager not in _STUBS:
        _STUBS[eager] = torch.jit.script_method(eager.forward)
    return _STUBS[eager]


def fresh_class(shape: str, style: str, features: int = SIZE.features) -> type[nn.Module]:
    """A new ``torch.jit.ScriptModule`` subclass of ``shape`` on every call, named as its eager twin.
    TorchScript compiles each class once, at its first instance, and torch 1.13.1 treats that first
    instance differently from later ones."""
    eager = MODELS[shape].eager

    def __init__(self: torch.jit.ScriptModule) -> None:
        torch.jit.ScriptModule.__init__(self)
        eager.parts(self, features)  # type: ignore[attr-defined]  # a shape's staticmethod

    forward = _compiled_forward(eager) if style == "script_method" else eager.forward
    qualname = f"_{eager.__name__}_{style}_{next(_SERIAL)}"  # where pickle finds it, as it finds a user's class
    cls = type(
        eager.__name__,
        (torch.jit.ScriptModule,),
        {"__init__": __init__, "forward": forward, "__module__": __name__, "__qualname__": qualname},
    )
    globals()[qualname] = cls
    return cls


def subject_class(shape: str, style: str, instance: str = "later", features: int = SIZE.features) -> type[nn.Module]:
    """The ScriptModule subclass a run builds: a fresh one for ``first``; for ``later``, a fresh one
    whose first instance has been built (and dropped). A run never meets a class another run used:
    TorchScript keeps state per class (its optimized graph), and a run's outcome must not depend on
    which runs came before it, in this process or in another (``repro.engine.forked``)."""
    cls = fresh_class(shape, style, features)
    if instance == "later":
        cls()
    return cls


def build_scripted(shape: str, style: str, instance: str, device: str, size: Size = SIZE) -> nn.Module:
    """The model a scenario runs on, on the ScriptModule side, with ``size``'s features."""
    model = MODELS[shape]
    if model.placement == "scripted child":
        eager = type(model.eager.__name__, (model.eager,), {})  # torch.jit.script compiles a class once too
        if instance == "later":
            torch.jit.script(eager(size.features))
        return EagerParent(torch.jit.script(eager(size.features))).to(device)
    scripted = subject_class(shape, style, instance, size.features)()
    return (EagerParent(scripted) if model.placement else scripted).to(device)


def build_eager(shape: str, device: str, size: Size = SIZE) -> nn.Module:
    """The eager twin of ``build_scripted``'s model."""
    model = MODELS[shape]
    built = model.eager(size.features)
    return (EagerParent(built) if model.placement else built).to(device)


def styles_of(shape: str) -> tuple[str, ...]:
    """The styles a scenario on ``shape`` runs in: both subclass styles, or only ``torch.jit.script``."""
    return (SCRIPTED,) if MODELS[shape].placement == "scripted child" else STYLES


def is_really_scripted(model: nn.Module) -> bool:
    """False when TorchScript is off (``PYTORCH_JIT=0`` turns ScriptModule into nn.Module)."""
    return "_actual_script_module" in model.__dict__
