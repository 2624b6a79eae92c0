import copy

import torch

from repro.catalogue.pieces import Net

model = Net()
model.register_forward_hook(lambda module, args, output: print("hook ran"))
clone = copy.deepcopy(model)
clone(torch.ones(1, 2))
assert type(clone) is Net, f"copy.deepcopy returned a {type(clone).__name__}, not a Net (its hooks are gone)"
