# Owner(s): ["oncall: jit"]

import copy

import torch
from torch.testing._internal.common_utils import TestCase, run_tests

from repro.catalogue.pieces import Net


class Mode(torch.jit.ScriptModule):
    def __init__(self) -> None:
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(1))

    @torch.jit.script_method
    def forward(self, x):
        return x * 0.0 + (1.0 if self.training else 0.0)


class TestScriptModuleCopy(TestCase):
    def test_copy_has_a_training_mode_of_its_own(self):
        model = Net()
        clone = copy.copy(model)
        clone.eval()
        self.assertTrue(model.training)
        self.assertFalse(clone.training)

    def test_copy_shares_parameters_as_a_shallow_copy_does(self):
        model = Mode()
        clone = copy.copy(model)
        self.assertIs(type(clone), Mode)
        clone.scale = torch.nn.Parameter(torch.full((1,), 2.0))
        self.assertIs(model.scale, clone.scale)

    def test_copy_runs_its_compiled_forward_in_its_own_mode(self):
        model = Mode()
        clone = copy.copy(model)
        clone.eval()
        x = torch.zeros(1)
        self.assertEqual((clone(x).item(), model(x).item()), (0.0, 1.0))


if __name__ == "__main__":
    run_tests()
