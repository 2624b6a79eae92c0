import torch
from torch.nn.modules.module import register_module_full_backward_hook

from repro.catalogue.pieces import PlainForward

calls = []
register_module_full_backward_hook(lambda module, grad_input, grad_output: calls.append(module))
model = PlainForward()
model(torch.ones(1, 2, requires_grad=True)).sum().backward()
assert len(calls) == 2, f"the global backward hook ran {len(calls)} times, expected twice"
