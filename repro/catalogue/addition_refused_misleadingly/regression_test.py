# Owner(s): ["oncall: jit"]

import torch
from torch.testing._internal.common_utils import TestCase, run_tests


class Net(torch.jit.ScriptModule):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(2, 2)
        self.register_buffer("scale", torch.ones(2))

    @torch.jit.script_method
    def forward(self, x):
        return self.linear(x) * self.scale


class TestScriptModuleAdditions(TestCase):
    def test_new_child_is_refused_in_words_that_say_why(self):
        with self.assertRaisesRegex(
            RuntimeError,
            "Cannot add the module 'extra' to a ScriptModule",
        ):
            Net().add_module("extra", torch.nn.ReLU())

    def test_new_parameter_and_buffer_are_refused_in_words_that_say_why(self):
        model = Net()
        with self.assertRaisesRegex(
            RuntimeError,
            "Cannot add the parameter 'extra' to a ScriptModule",
        ):
            model.register_parameter("extra", torch.nn.Parameter(torch.ones(2)))
        with self.assertRaisesRegex(
            RuntimeError,
            "Cannot add the buffer 'extra' to a ScriptModule",
        ):
            model.register_buffer("extra", torch.ones(2))

    def test_buffer_on_a_child_is_refused_as_a_buffer(self):
        with self.assertRaisesRegex(RuntimeError, "Cannot add 'extra' to a ScriptModule"):
            Net().linear.register_buffer("extra", torch.ones(2))

    def test_existing_parameter_can_still_be_assigned(self):
        model = Net()
        model.linear.weight = torch.nn.Parameter(torch.zeros(2, 2))
        self.assertEqual(model(torch.ones(1, 2)), model.linear.bias.expand(1, 2) * model.scale)


if __name__ == "__main__":
    run_tests()
