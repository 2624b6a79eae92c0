# Owner(s): ["oncall: jit"]

import torch
from torch.testing._internal.common_utils import TestCase, run_tests

from repro.catalogue.pieces import Net


def fresh():
    # a class of its own: instances of one class share its compiled forward and what it profiled
    class Scaled(Net):
        @torch.jit.script_method
        def forward(self, x, scale: float = 2.0):
            return self.linear(x) * scale + 1.0

    return Scaled()


class TestScriptModuleGradModes(TestCase):
    def optimized(self):
        model, x = fresh(), torch.ones(1, 2, requires_grad=True)
        for _ in range(3):  # profiled, then optimized
            model(x).sum().backward()
        return model, x

    def test_no_grad_after_optimization(self):
        model, x = self.optimized()
        with torch.no_grad():
            out = model(x)
        self.assertFalse(out.requires_grad)
        self.assertEqual(out, model.linear(x.detach()) * 2.0 + 1.0)

    def test_inference_mode_after_optimization(self):
        model, x = self.optimized()
        with torch.inference_mode():
            out = model(x)
        self.assertTrue(out.is_inference())

    def test_jvp_after_optimization(self):
        model, x = self.optimized()
        tangent = torch.ones(1, 2)
        # torch.func.jvp returns (output, jvp_out); its stub says a longer tuple
        _, out = torch.func.jvp(model, (x.detach(),), (tangent,))  # type: ignore[misc]
        self.assertEqual(out, (tangent @ model.linear.weight.T) * 2.0)

    def test_default_and_keyword_arguments_outside_grad_mode(self):
        model, x = self.optimized()
        with torch.no_grad():
            self.assertEqual(model(x), model(x, scale=2.0))
            self.assertEqual(model.forward(x, 3.0), model.linear(x) * 3.0 + 1.0)

    def test_grad_mode_still_runs_the_optimized_graph(self):
        model, x = self.optimized()
        out = model(x)
        self.assertTrue(out.requires_grad)
        out.sum().backward()
        self.assertEqual(x.grad.shape, x.shape)


if __name__ == "__main__":
    run_tests()
