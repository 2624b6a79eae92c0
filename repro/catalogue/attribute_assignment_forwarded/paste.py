import torch


class Net(torch.jit.ScriptModule):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(2, 2))

    @torch.jit.script_method
    def forward(self, x):
        return x @ self.weight


model = Net()
try:
    model.weight = None  # nn.Module allows it: the parameter is dropped
except RuntimeError as err:  # its message ends in C++ frames: its first line says it
    raise AssertionError(f"model.weight = None raised: {str(err).splitlines()[0]}") from None
