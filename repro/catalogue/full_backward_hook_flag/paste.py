import torch

from repro.catalogue.pieces import Net

calls = []
model = Net()
model.register_full_backward_hook(lambda *args: calls.append(args))  # (module, grad_input, grad_output)
x = torch.ones(1, 2, requires_grad=True)
model(x).sum().backward()
assert len(calls) == 1, f"the full backward hook ran {len(calls)} times, expected once"
module, grad_input, grad_output = calls[0]
assert module is model and torch.equal(grad_input[0], x.grad) and torch.equal(grad_output[0], torch.ones(1, 2))
