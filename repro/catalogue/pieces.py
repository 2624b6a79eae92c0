"""The models the texts upstream gets share. A bug's ``regression_test.py`` and ``paste.py`` import them
from here, and ``repro.catalogue.texts.rendered`` puts each one's source in place of that import, so
upstream reads one self-contained file and we keep one copy. Never imported at run time."""

import torch


class Net(torch.jit.ScriptModule):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(2, 2)

    @torch.jit.script_method
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x)


class PlainForward(torch.jit.ScriptModule):  # a plain forward, as torch_npu's tests write it
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(2, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x)


class Parent(torch.nn.Module):  # an eager model holding a ScriptModule as its child
    def __init__(self, inner: torch.nn.Module) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inner(x) * 2


class Scaling(torch.nn.Module):  # an eager layer with a buffer registered with persistent=False
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("scale", torch.ones(2), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.scale
