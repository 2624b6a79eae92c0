import copy

import torch

model = torch.jit.script(torch.nn.Linear(2, 2))
clone = copy.deepcopy(model)
clone(torch.ones(1, 2)).sum().backward()
print("the copy's weight:", "grad_fn", clone.weight.grad_fn, "is_leaf", clone.weight.is_leaf)
print("the original's weight.grad is set:", model.weight.grad is not None)
assert clone.weight.is_leaf, f"the copy's weight is not a leaf (grad_fn {clone.weight.grad_fn})"
