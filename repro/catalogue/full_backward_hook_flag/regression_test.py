# Owner(s): ["oncall: jit"]
# Regression test for https://github.com/pytorch/pytorch/issues/181473

import torch
from torch.testing._internal.common_utils import TestCase, run_tests

from repro.catalogue.pieces import Net


class TestScriptModuleBackwardHooks(TestCase):
    def _backward_with(self, register):
        m = Net()
        calls = []
        register(
            m,
            lambda mod, grad_input, grad_output: calls.append((mod, grad_input, grad_output)),
        )
        x = torch.ones(1, 2, requires_grad=True)
        m(x).sum().backward()
        return m, calls

    def test_full_backward_hook_fires_with_gradients(self):
        m, calls = self._backward_with(lambda m, hook: m.register_full_backward_hook(hook))
        self.assertEqual(len(calls), 1)
        self.assertIs(calls[0][0], m)
        self.assertEqual(calls[0][1][0], torch.ones(1, 2) @ m.linear.weight)
        self.assertEqual(calls[0][2][0], torch.ones(1, 2))

    def test_legacy_backward_hook_fires(self):
        _, calls = self._backward_with(lambda m, hook: m.register_backward_hook(hook))
        self.assertEqual(len(calls), 1)

    def test_full_backward_hook_removed(self):
        m = Net()
        calls = []
        handle = m.register_full_backward_hook(lambda *args: calls.append(args))
        handle.remove()
        m(torch.ones(1, 2, requires_grad=True)).sum().backward()
        self.assertEqual(calls, [])


if __name__ == "__main__":
    run_tests()
