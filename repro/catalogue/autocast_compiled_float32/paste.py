import torch

from repro.catalogue.pieces import Net


class Scaled(Net):
    @torch.jit.script_method
    def forward(self, x):
        return self.linear(x) * 2.0 + 1.0


with torch.autocast("cpu", dtype=torch.bfloat16):
    out = Scaled()(torch.ones(1, 2))
assert out.dtype == torch.bfloat16, f"under autocast the compiled forward returned {out.dtype}"
