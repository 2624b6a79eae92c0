# Owner(s): ["oncall: jit"]

import torch
from torch.testing._internal.common_utils import TestCase, run_tests

from repro.catalogue.pieces import Net


class CustomError(Exception):
    pass


class Refusing(Net):
    @torch.jit.script_method
    def forward(self, x):
        if bool(x.sum() < 0):
            raise ValueError("negative input")
        return self.linear(x)


class Parent(torch.jit.ScriptModule):
    def __init__(self) -> None:
        super().__init__()
        self.child = Refusing()

    @torch.jit.script_method
    def forward(self, x):
        if bool(x.sum() > 100):
            raise CustomError("too large")
        return self.child(x)


class TestScriptModuleExceptions(TestCase):
    def test_exception_reaches_the_caller_as_its_own_class(self):
        with self.assertRaisesRegex(ValueError, "^negative input$") as caught:
            Refusing()(-torch.ones(1, 2))
        self.assertIsInstance(caught.exception.__cause__, torch.jit.Error)

    def test_exception_of_a_compiled_child_and_a_user_class(self):
        with self.assertRaisesRegex(ValueError, "negative input"):
            Parent()(-torch.ones(1, 2))
        with self.assertRaisesRegex(CustomError, "too large"):
            Parent()(torch.full((1, 2), 60.0))

    def test_a_call_that_does_not_raise_is_unchanged(self):
        model = Refusing()
        self.assertEqual(model(torch.ones(1, 2)), model.linear(torch.ones(1, 2)))


if __name__ == "__main__":
    run_tests()
