# Owner(s): ["oncall: jit"]

import torch
from torch.testing._internal.common_utils import TestCase, run_tests


def add_one(module, args: tuple[torch.Tensor], output: torch.Tensor) -> torch.Tensor:
    return output + 1


class TestHooksBeforeCompiledForward(TestCase):
    def test_hook_in_init_with_a_python_forward_is_refused_clearly(self):
        class PlainForward(torch.jit.ScriptModule):
            def __init__(self) -> None:
                super().__init__()
                self.linear = torch.nn.Linear(2, 2)
                self.register_forward_hook(add_one)

            def forward(self, x):
                return self.linear(x)

        with self.assertRaisesRegex(RuntimeError, "PlainForward has forward hooks or pre-hooks"):
            PlainForward()

    def test_hook_in_init_with_a_script_method_forward_runs(self):
        class ScriptForward(torch.jit.ScriptModule):
            def __init__(self) -> None:
                super().__init__()
                self.linear = torch.nn.Linear(2, 2)
                self.register_forward_hook(add_one)

            @torch.jit.script_method
            def forward(self, x):
                return self.linear(x)

        model = ScriptForward()
        x = torch.ones(1, 2)
        self.assertEqual(model(x), model.linear(x) + 1)


if __name__ == "__main__":
    run_tests()
