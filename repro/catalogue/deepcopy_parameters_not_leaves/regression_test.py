# Owner(s): ["oncall: jit"]

import copy

import torch
from torch.testing._internal.common_utils import TestCase, run_tests

from repro.catalogue.pieces import Parent


class TestScriptModuleDeepcopyLeaves(TestCase):
    def test_deepcopy_parameters_are_leaves_of_the_copy(self):
        model = torch.jit.script(torch.nn.Linear(2, 2))
        model.bias.requires_grad_(False)
        clone = copy.deepcopy(model)
        self.assertTrue(all(p.is_leaf for p in clone.parameters()))
        # nn.Parameters, as eager's copy holds (torch.export refuses plain tensors)
        self.assertTrue(all(type(p) is torch.nn.Parameter for p in clone.parameters()))
        self.assertEqual([p.requires_grad for p in clone.parameters()], [True, False])
        clone(torch.ones(1, 2)).sum().backward()
        self.assertIsNotNone(clone.weight.grad)
        self.assertIsNone(model.weight.grad)

    def test_deepcopy_of_an_eager_parent_copies_a_scripted_child_to_leaves(self):
        model = Parent(torch.jit.script(torch.nn.Linear(2, 2)))
        clone = copy.deepcopy(model)
        clone(torch.ones(1, 2)).sum().backward()
        self.assertIsNotNone(clone.inner.weight.grad)
        self.assertIsNone(model.inner.weight.grad)
        torch.optim.SGD(clone.parameters(), lr=0.1).step()  # refuses a non-leaf parameter

    def test_deepcopy_keeps_a_shared_parameter_shared(self):
        class Tied(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.a = torch.nn.Linear(2, 2)
                self.b = torch.nn.Linear(2, 2)
                self.b.weight = self.a.weight

            def forward(self, x):
                return self.b(self.a(x))

        clone = copy.deepcopy(torch.jit.script(Tied()))
        self.assertIs(clone.a.weight, clone.b.weight)
        self.assertTrue(clone.a.weight.is_leaf)
        self.assertIs(type(clone.a.weight), torch.nn.Parameter)


if __name__ == "__main__":
    run_tests()
