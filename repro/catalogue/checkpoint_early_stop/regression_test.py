# Owner(s): ["oncall: jit"]

import torch
from torch.testing._internal.common_utils import TestCase, run_tests
from torch.utils.checkpoint import CheckpointError, checkpoint

from repro.catalogue.pieces import Net


def fresh():
    # a class of its own: instances of one class share its compiled forward and what it profiled
    class Tanh(Net):
        @torch.jit.script_method
        def forward(self, x):
            return torch.tanh(self.linear(x)) * 2.0

    return Tanh()


class TestCheckpointScriptModule(TestCase):
    def test_early_stop_through_a_compiled_forward(self):
        model = fresh()
        model(torch.ones(1, 2, requires_grad=True))  # its first run, profiled
        for _ in range(2):
            x = torch.ones(1, 2, requires_grad=True)
            checkpoint(model, x, use_reentrant=False).sum().backward()
            expected = torch.ones(1, 2, requires_grad=True)
            model(expected).sum().backward()
            self.assertEqual(x.grad, expected.grad)

    def test_first_call_of_a_fresh_compiled_forward_says_why_it_fails(self):
        x = torch.ones(1, 2, requires_grad=True)
        with self.assertRaisesRegex(CheckpointError, "saved more tensors than its first run did"):
            checkpoint(fresh(), x, use_reentrant=False).sum().backward()


if __name__ == "__main__":
    run_tests()
