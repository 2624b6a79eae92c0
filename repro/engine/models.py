"""The modules under test: two ScriptModule subclasses and their eager ``nn.Module`` twin.

Importing this module compiles nothing yet, but defining ``ScriptMethodNet`` calls
``torch.jit.script_method``, which warns (and may one day raise): import it inside the
oracle's warning capture. All three share one layer with fixed, exactly representable
weights, so gradients compare exactly across the twins.
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

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x)


class PlainForwardNet(torch.jit.ScriptModule):
    """The downstream suite's shape: a ScriptModule subclass with a plain ``def forward``."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(2, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x)


class ScriptMethodNet(torch.jit.ScriptModule):
    """The documented shape: ``forward`` compiled with ``@torch.jit.script_method``."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(2, 2)

    @torch.jit.script_method
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x)


STYLES: dict[str, type[nn.Module]] = {
    "script_method": ScriptMethodNet,
    "plain_forward": PlainForwardNet,
}


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
