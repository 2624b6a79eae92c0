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

import torch
import torch.nn.functional as F
from torch import nn

WEIGHT = [[1.0, -2.0], [0.5, 3.0]]
BIAS = [0.25, -1.0]
STYLES = ("script_method", "plain_forward")
SCRIPTED = "torch.jit.script"  # the only style of a scripted child: torch.jit.script makes it, not a subclass
INSTANCES = ("first", "later")  # a fresh class's first instance, and an instance of a class already built


def _own_layer(module: nn.Module) -> None:
    """The layer's parameters on the module itself: the cheapest model TorchScript compiles."""
    module.weight = nn.Parameter(torch.tensor(WEIGHT))
    module.bias = nn.Parameter(torch.tensor(BIAS))
    module.register_buffer("steps", torch.zeros(1))  # a buffer, for the buffer-registration hook


def _child_layer(module: nn.Module) -> None:
    """The layer as an ``nn.Linear`` child: what global hooks and submodule hooks need."""
    module.linear = nn.Linear(2, 2)
    with torch.no_grad():
        module.linear.weight.copy_(torch.tensor(WEIGHT))
        module.linear.bias.copy_(torch.tensor(BIAS))
    module.register_buffer("steps", torch.zeros(1))


class _Built(nn.Module):
    """An eager model made by its ``parts`` function (a ``Callable[[nn.Module], None]``), which the
    ScriptModule side's ``__init__`` calls too. No class annotation says so, nor types the attributes
    ``parts`` sets: ``torch.jit.script`` reads a class's annotations, and torch 1.13.1 fails on a string
    one (``from __future__ import annotations``). Nor can a ``# type: ignore`` comment be put in a
    ``forward``: TorchScript reads ``# type:`` comments as signatures (pyproject.toml's mypy section
    names the error codes this module's forwards raise instead)."""

    def __init__(self) -> None:
        super().__init__()
        self.parts(self)


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


def _subclass_child(module: nn.Module) -> None:
    """A ``Flat`` child: on the ScriptModule side itself a ScriptModule subclass (``script_method``
    style), made before the parent is compiled, as users nest their own ScriptModule classes."""
    scripted = isinstance(module, torch.jit.ScriptModule)
    module.inner = subject_class("flat", "script_method")() if scripted else Flat()


class WithSubclassChild(_Built):
    parts = staticmethod(_subclass_child)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inner(x)


class EagerParent(nn.Module):
    """An eager model holding the model under test as its child ``inner``."""

    def __init__(self, inner: nn.Module) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inner(x)


@dataclass(frozen=True)
class Model:
    """One shape: its eager class, the further forward arguments after ``x``, and where the model
    under test sits (``""``: it is the model; ``"in eager parent"``: ``m.inner`` of an eager parent;
    ``"scripted child"``: ``m.inner`` is ``torch.jit.script`` of the eager class, in style ``SCRIPTED``)."""

    eager: type[_Built]
    extra: Callable[[str], tuple] = lambda device: ()
    placement: str = ""


MODELS: dict[str, Model] = {
    "flat": Model(Flat),
    "child": Model(WithChild),
    "two inputs": Model(TwoInputs, lambda device: (torch.tensor([[2.0, -1.0]], device=device, requires_grad=True),)),
    "non-tensor input": Model(NonTensorInput, lambda device: (0.5,)),
    "in eager parent": Model(Flat, placement="in eager parent"),
    "scripted child": Model(Flat, placement="scripted child"),
    "subclass child": Model(WithSubclassChild),
    "raising": Model(Raising),
}

_STUBS: dict[type, object] = {}
_SERIAL = itertools.count()
_LATER: dict[tuple[str, str], type] = {}


def _compiled_forward(eager: type[nn.Module]) -> object:
    """``eager.forward`` as a ``script_method`` stub, made once (it parses the source)."""
    if eager not in _STUBS:
        _STUBS[eager] = torch.jit.script_method(eager.forward)
    return _STUBS[eager]


def fresh_class(shape: str, style: str) -> type[nn.Module]:
    """A new ``torch.jit.ScriptModule`` subclass of ``shape`` on every call, named as its eager twin.
    TorchScript compiles each class once, at its first instance, and torch 1.13.1 treats that first
    instance differently from later ones."""
    eager = MODELS[shape].eager

    def __init__(self: torch.jit.ScriptModule) -> None:
        torch.jit.ScriptModule.__init__(self)
        eager.parts(self)  # type: ignore[attr-defined]  # a shape's staticmethod

    forward = _compiled_forward(eager) if style == "script_method" else eager.forward
    qualname = f"_{eager.__name__}_{style}_{next(_SERIAL)}"  # where pickle finds it, as it finds a user's class
    cls = type(
        eager.__name__,
        (torch.jit.ScriptModule,),
        {"__init__": __init__, "forward": forward, "__module__": __name__, "__qualname__": qualname},
    )
    globals()[qualname] = cls
    return cls


def subject_class(shape: str, style: str, instance: str = "later") -> type[nn.Module]:
    """The ScriptModule subclass a run builds: a fresh one for ``first``; for ``later``, one class per
    shape and style, which has had its first instance already."""
    if instance == "first":
        return fresh_class(shape, style)
    if (shape, style) not in _LATER:
        cls = fresh_class(shape, style)
        cls()
        _LATER[shape, style] = cls
    return _LATER[shape, style]


def forget_built_classes() -> None:
    """Later runs build their classes anew: what TorchScript compiled under a candidate fix (or
    without it) must not serve runs judged otherwise."""
    _LATER.clear()


def build_script(shape: str, style: str, instance: str, device: str) -> nn.Module:
    """The model a scenario runs on, on the ScriptModule side."""
    model = MODELS[shape]
    if model.placement == "scripted child":
        eager = model.eager if instance == "later" else type(model.eager.__name__, (model.eager,), {})
        return EagerParent(torch.jit.script(eager())).to(device)
    scripted = subject_class(shape, style, instance)()
    return (EagerParent(scripted) if model.placement else scripted).to(device)


def build_eager(shape: str, device: str) -> nn.Module:
    """The eager twin of ``build_script``'s model."""
    model = MODELS[shape]
    return (EagerParent(model.eager()) if model.placement else model.eager()).to(device)


def styles_of(shape: str) -> tuple[str, ...]:
    """The styles a scenario on ``shape`` runs in: both subclass styles, or only ``torch.jit.script``."""
    return (SCRIPTED,) if MODELS[shape].placement == "scripted child" else STYLES


def is_really_scripted(model: nn.Module) -> bool:
    """False when TorchScript is off (``PYTORCH_JIT=0`` turns ScriptModule into nn.Module)."""
    return "_actual_script_module" in model.__dict__
