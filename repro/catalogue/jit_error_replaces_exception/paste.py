import torch


class Net(torch.jit.ScriptModule):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(2, 2)

    @torch.jit.script_method
    def forward(self, x):
        if bool(x.sum() < 0):
            raise ValueError("negative input")
        return self.linear(x)


try:
    Net()(-torch.ones(1, 2))
except ValueError:
    pass  # what eager nn.Module raises
except Exception as err:
    raise AssertionError(f"the caller got {type(err).__name__}, not ValueError") from err
