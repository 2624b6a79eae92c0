import torch
from torch.utils.checkpoint import checkpoint

from repro.catalogue.pieces import Net


class Tanh(Net):
    @torch.jit.script_method
    def forward(self, x):
        return torch.tanh(self.linear(x)) * 2.0


x = torch.ones(1, 2, requires_grad=True)
try:
    checkpoint(Tanh(), x, use_reentrant=False).sum().backward()  # works on nn.Module
except RuntimeError as err:  # its message goes on with TorchScript's traceback: its first line says it
    raise AssertionError(f"backward through checkpoint raised: {str(err).splitlines()[0]}") from None
