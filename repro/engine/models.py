"""The modules under test: two ScriptModule subclasses and their eager ``nn.Module`` twin.

Importing this module compiles nothing yet, but defining a ``script_method`` class calls
``torch.jit.script_method``, which warns (and may one day raise): import it inside the
oracle's warning capture. All share one layer with fixed, exactly representable weights (and
one buffer), so gradients compare exactly across the twins. ``fresh_class`` makes a new class
object per call, for scenarios run on a class's first instance.
"""

from __future__ import annotations

import torch
from torch import nn

WEIGHT = [[1.0, -2.0], [0.5, 3.0]]
BIAS = [0.25, -1.0]


class EagerNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(2, 2)
        self.register_buffer("steps", torch.zeros(1))  # a buffer, for the buffer-registration hook

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x)


def build(cls: type[nn.Module], device: str) -> nn.Module:
    """Instantiate ``cls`` on ``device`` with the shared fixed weights."""
    model = cls().to(device)
    with torch.no_grad():
        model.linear.weight.copy_(torch.tensor(WEIGHT))
        model.linear.bias.copy_(torch.tensor(BIAS))
    return model


def is_really_scripted(model: nn.Module) -> bool:
    """False when TorchScript is off (``PYTORCH_JIT=0`` turns ScriptModule into nn.Module)."""
    return "_actual_script_module" in model.__dict__


def fresh_class(style: str) -> type[nn.Module]:
    """A new class object of ``style`` on every call. TorchScript compiles each class once, at its
    first instance, and torch 1.13.1 treats that first instance differently from later ones; the
    class must come from a real source file, since compiling ``script_method`` reads the source."""
    if style == "script_method":
        class ScriptMethodNet(torch.jit.ScriptModule):  # the documented shape: a compiled forward
            def __init__(self) -> None:
                super().__init__()
                self.linear = nn.Linear(2, 2)
                self.register_buffer("steps", torch.zeros(1))

            @torch.jit.script_method
            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return self.linear(x)

        return ScriptMethodNet

    class PlainForwardNet(torch.jit.ScriptModule):  # torch_npu's tests' shape: a plain forward
        def __init__(self) -> None:
            super().__init__()
            self.linear = nn.Linear(2, 2)
            self.register_buffer("steps", torch.zeros(1))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.linear(x)

    return PlainForwardNet


# One class per style for the whole run: its instances after the first are "later" instances.
ScriptMethodNet, PlainForwardNet = fresh_class("script_method"), fresh_class("plain_forward")
STYLES: dict[str, type[nn.Module]] = {"script_method": ScriptMethodNet, "plain_forward": PlainForwardNet}
