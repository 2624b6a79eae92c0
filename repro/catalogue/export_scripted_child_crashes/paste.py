import torch


class Inner(torch.jit.ScriptModule):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(2, 2)

    def forward(self, x):
        return self.linear(x)


class Net(torch.nn.Module):  # an eager model holding it, as users export them
    def __init__(self):
        super().__init__()
        self.inner = Inner()

    def forward(self, x):
        return self.inner(x)


try:
    torch.export.export(Net(), (torch.ones(1, 2),))
except (AttributeError, TypeError) as err:  # a ScriptModule root gets a clear ValueError instead
    raise AssertionError(f"export crashed in its tracer: {err}") from None  # its stack is 80 frames
