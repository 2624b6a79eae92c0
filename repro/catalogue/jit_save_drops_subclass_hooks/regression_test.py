# Owner(s): ["oncall: jit"]

import io

import torch
from torch.testing._internal.common_utils import TestCase, run_tests


def doubled(module: torch.nn.Module, args: tuple[torch.Tensor], out: torch.Tensor) -> torch.Tensor:
    return out * 2


class Net(torch.jit.ScriptModule):
    def __init__(self, hooked: bool = False) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(2, 2)
        if hooked:
            self.register_forward_hook(doubled)

    @torch.jit.script_method
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x)


def saved_and_loaded(model):
    buffer = io.BytesIO()
    torch.jit.save(model, buffer)
    buffer.seek(0)
    return torch.jit.load(buffer)


class TestSaveHooksRegisteredAfterCompilation(TestCase):
    def test_save_refuses_a_hook_registered_after_construction(self):
        model = Net()
        model.register_forward_hook(doubled)
        with self.assertRaisesRegex(RuntimeError, "would save the module without it"):
            torch.jit.save(model, io.BytesIO())

    def test_save_keeps_a_hook_registered_in_init(self):
        model = Net(hooked=True)
        x = torch.ones(1, 2)
        self.assertEqual(saved_and_loaded(model)(x), model(x))

    def test_save_keeps_the_hooks_of_a_scripted_module_and_of_a_loaded_one(self):
        eager = torch.nn.Linear(2, 2)
        eager.register_forward_hook(doubled)
        loaded = saved_and_loaded(torch.jit.script(eager))
        x = torch.ones(1, 2)
        self.assertEqual(saved_and_loaded(loaded)(x), eager(x))


if __name__ == "__main__":
    run_tests()
