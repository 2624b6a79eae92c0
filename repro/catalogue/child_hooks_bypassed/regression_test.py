# Owner(s): ["oncall: jit"]

import torch
from torch.testing._internal.common_utils import TestCase, run_tests

from repro.catalogue.pieces import Net


class CompiledParent(torch.jit.ScriptModule):
    def __init__(self) -> None:
        super().__init__()
        self.child = Net()

    @torch.jit.script_method
    def forward(self, x):
        return self.child(x)


class PlainParent(CompiledParent):
    def forward(self, x):
        return self.child(x)


class TestScriptModuleChildHooks(TestCase):
    def test_hook_on_a_child_a_compiled_forward_calls_is_refused(self):
        model = CompiledParent()
        with self.assertRaisesRegex(RuntimeError, "compiled forward of its parent CompiledParent"):
            model.child.register_forward_hook(lambda *args: None)
        with self.assertRaisesRegex(RuntimeError, "compiled forward of its parent CompiledParent"):
            model.child.register_forward_pre_hook(lambda *args: None)

    def test_hook_on_a_child_a_python_forward_calls_runs(self):
        model, calls = PlainParent(), []
        model.child.register_forward_hook(lambda module, args, output: calls.append(module))
        model(torch.ones(1, 2))
        self.assertEqual(calls, [model.child])


if __name__ == "__main__":
    run_tests()
