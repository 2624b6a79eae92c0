# Owner(s): ["oncall: jit"]

import copy

import torch
from torch.testing._internal.common_utils import TestCase, run_tests

from repro.catalogue.pieces import Net


class PlainForward(Net):
    def forward(self, x):
        return self.linear(x) * 2


class TestScriptModuleDeepcopy(TestCase):
    def test_deepcopy_keeps_the_class_and_its_hooks(self):
        model, calls = Net(), []
        model.register_forward_hook(lambda *args: calls.append(args))
        clone = copy.deepcopy(model)
        clone(torch.ones(1, 2))
        self.assertIs(type(clone), Net)
        self.assertEqual(len(calls), 1)

    def test_deepcopy_keeps_a_python_forward(self):
        model = PlainForward()
        clone = copy.deepcopy(model)
        x = torch.ones(1, 2)
        self.assertEqual(clone(x), model(x))

    def test_deepcopy_parameters_are_independent_leaves(self):
        model = Net()
        clone = copy.deepcopy(model)
        clone(torch.ones(1, 2)).sum().backward()
        self.assertIsNotNone(clone.linear.weight.grad)
        self.assertIsNone(model.linear.weight.grad)
        self.assertIsNot(clone.linear.weight, model.linear.weight)
        # nn.Parameters, as eager's copy holds (torch.export refuses plain tensors)
        self.assertTrue(all(type(p) is torch.nn.Parameter for p in clone.parameters()))


if __name__ == "__main__":
    run_tests()
