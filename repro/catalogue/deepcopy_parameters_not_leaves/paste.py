import copy

import torch

model = torch.jit.script(torch.nn.Linear(2, 2))
clone = copy.deepcopy(model)
clone(torch.ones(1, 2)).sum().backward()  # fills model.weight.grad, not clone.weight.grad
assert clone.weight.is_leaf, f"the copy's weight is not a leaf (grad_fn {type(clone.weight.grad_fn).__name__})"
