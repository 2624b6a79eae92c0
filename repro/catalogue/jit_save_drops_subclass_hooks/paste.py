import io

import torch

from repro.catalogue.pieces import Net


def doubled(module: torch.nn.Module, args: tuple[torch.Tensor], out: torch.Tensor) -> torch.Tensor:
    return out * 2


model = Net()
model.register_forward_hook(doubled)  # after construction: this process runs it
buffer = io.BytesIO()
torch.jit.save(torch.jit.script(model), buffer)  # script returns the model as it is; no warning
buffer.seek(0)
x = torch.ones(1, 2)
assert torch.equal(torch.jit.load(buffer)(x), model(x)), "the saved module runs without the forward hook"
