# Owner(s): ["oncall: jit"]

import torch
from torch.testing._internal.common_utils import TestCase, run_tests

from repro.catalogue.pieces import Net


class Scaled(Net):
    @torch.jit.script_method
    def forward(self, x):
        return self.linear(x) * 2.0 + 1.0


class Eager(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(2, 2)

    def forward(self, x):
        return self.linear(x) * 2.0 + 1.0


class TestScriptModuleEagerAutocast(TestCase):
    def test_compiled_forward_follows_eager_autocast(self):
        model, eager = Scaled(), Eager()
        eager.load_state_dict(model.state_dict())
        x = torch.ones(1, 2)
        for _ in range(3):  # the first call and the optimized ones
            with torch.autocast("cpu", dtype=torch.bfloat16):
                out, expected = model(x), eager(x)
            self.assertEqual(out.dtype, torch.bfloat16)
            self.assertEqual(out, expected)
        self.assertEqual(model(x).dtype, torch.float32)


if __name__ == "__main__":
    run_tests()
