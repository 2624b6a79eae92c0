import copy

from repro.catalogue.pieces import Net

model = Net()
copy.copy(model).eval()
assert model.training, "eval() on a copy.copy of the model put the original in eval mode too"
