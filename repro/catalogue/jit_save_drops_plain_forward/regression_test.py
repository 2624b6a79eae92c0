# Owner(s): ["oncall: jit"]

import io

import torch
from torch.testing._internal.common_utils import TestCase, run_tests


class PlainForward(torch.jit.ScriptModule):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(2, 2)

    def forward(self, x):
        return self.linear(x)


class ScriptForward(PlainForward):
    @torch.jit.script_method
    def forward(self, x):
        return self.linear(x)


class TestSaveUncompiledForward(TestCase):
    def test_save_refuses_a_python_forward(self):
        with self.assertRaisesRegex(RuntimeError, "PlainForward.forward is a Python method"):
            torch.jit.save(PlainForward(), io.BytesIO())

    def test_save_keeps_a_script_method_forward(self):
        buffer = io.BytesIO()
        model = ScriptForward()
        torch.jit.save(model, buffer)
        buffer.seek(0)
        x = torch.ones(1, 2)
        self.assertEqual(torch.jit.load(buffer)(x), model(x))


if __name__ == "__main__":
    run_tests()
