import torch

from repro.catalogue.pieces import Scaling

keys = sorted(torch.jit.script(Scaling()).state_dict())
assert keys == sorted(Scaling().state_dict()), f"state_dict holds the non-persistent buffer: {keys}"
