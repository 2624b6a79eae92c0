import torch

from repro.catalogue.pieces import Net

model = Net()  # its __init__ ran
try:
    model.register_buffer("extra", torch.ones(1))  # nn.Module accepts a new buffer
except AttributeError as err:
    raise AssertionError(f"refused with a message about __init__: {err}") from None
