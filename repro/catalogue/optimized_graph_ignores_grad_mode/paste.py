import torch

from repro.catalogue.pieces import Net


class Scaled(Net):
    @torch.jit.script_method
    def forward(self, x):
        return self.linear(x) * 2.0 + 1.0


model, x = Scaled(), torch.ones(1, 2, requires_grad=True)
model(x)
model(x)  # from now on the optimized graph runs
with torch.no_grad():
    out = model(x)
assert not out.requires_grad, "under torch.no_grad() the output of the optimized forward requires grad"
