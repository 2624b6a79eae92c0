import torch


class Scaling(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.ones(2), persistent=False)

    def forward(self, x):
        return x * self.scale


keys = sorted(torch.jit.script(Scaling()).state_dict())
assert keys == sorted(Scaling().state_dict()), f"state_dict holds the non-persistent buffer: {keys}"
