import torch


class Scaling(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.ones(2), persistent=False)

    def forward(self, x):
        return x * self.scale


eager, compiled = Scaling(), torch.jit.script(Scaling())
print("eager state_dict:", sorted(eager.state_dict()), "compiled:", sorted(compiled.state_dict()))
assert "scale" not in compiled.state_dict(), "state_dict holds the non-persistent buffer 'scale'"
