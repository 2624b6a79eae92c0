import torch


def hook(module, args, output):
    return None


class Net(torch.jit.ScriptModule):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(2, 2)
        self.register_forward_hook(hook)  # in __init__, as eager models often do

    def forward(self, x):  # a plain forward, as torch_npu's tests write it
        return self.linear(x)


try:
    Net()
except RuntimeError as err:
    raise AssertionError(f"construction failed: {str(err).splitlines()[0][:40]}") from err
