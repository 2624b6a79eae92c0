# Owner(s): ["oncall: jit"]

import torch
from torch.testing._internal.common_utils import TestCase, run_tests


class Net(torch.jit.ScriptModule):
    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(2, 2))
        self.register_buffer("steps", torch.zeros(1))

    @torch.jit.script_method
    def forward(self, x):
        return x @ self.weight + self.steps


class TestScriptModuleAssignment(TestCase):
    def test_none_on_a_parameter_or_buffer_is_refused_in_words_that_say_why(self):
        model = Net()
        for name in ("weight", "steps"):
            with self.assertRaisesRegex(
                RuntimeError,
                f"cannot assign None to '{name}' of a ScriptModule",
            ):
                setattr(model, name, None)

    def test_training_takes_a_bool_only(self):
        with self.assertRaisesRegex(TypeError, "to training of a ScriptModule"):
            # the wrong type is what is tested
            Net().training = 0  # type: ignore[assignment]

    def test_plain_tensor_on_a_parameter_is_refused_as_nn_module_refuses_it(self):
        with self.assertRaisesRegex(TypeError, "torch.nn.Parameter or None expected"):
            # the wrong type is what is tested
            Net().weight = torch.ones(2, 2)  # type: ignore[assignment]

    def test_attribute_set_after_construction_can_be_deleted(self):
        model = Net()
        model.label = "a"
        del model.label
        self.assertFalse(hasattr(model, "label"))


if __name__ == "__main__":
    run_tests()
