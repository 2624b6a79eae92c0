import torch

from repro.catalogue.pieces import Net


class Parent(torch.jit.ScriptModule):
    def __init__(self):
        super().__init__()
        self.child = Net()  # itself a ScriptModule subclass

    @torch.jit.script_method
    def forward(self, x):
        return self.child(x)


calls = []
model = Parent()
model.child.register_forward_hook(lambda module, args, output: calls.append(module))
model(torch.ones(1, 2))
assert calls, "the forward hook on model.child registered without error and never ran"
