# Owner(s): ["oncall: jit"]

import torch
from torch.testing._internal.common_utils import TestCase, run_tests


class PlainForward(torch.jit.ScriptModule):
    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(2, 2))

    def forward(self, x):
        return torch.nn.functional.linear(x, self.weight) * 2


class ScriptForward(PlainForward):
    @torch.jit.script_method
    def forward(self, x):
        return torch.nn.functional.linear(x, self.weight) * 2


class TestScriptModuleCompile(TestCase):
    def test_compile_refuses_a_python_forward(self):
        with self.assertRaisesRegex(RuntimeError, "cannot compile a ScriptModule"):
            PlainForward().compile(backend="eager")

    def test_compile_refuses_a_script_method_forward(self):
        with self.assertRaisesRegex(RuntimeError, "cannot compile a ScriptModule"):
            ScriptForward().compile(backend="eager")


if __name__ == "__main__":
    run_tests()
