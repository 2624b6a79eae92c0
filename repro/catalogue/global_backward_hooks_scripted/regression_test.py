# Owner(s): ["oncall: jit"]

import torch
from torch.nn.modules.module import (
    register_module_full_backward_hook,
    register_module_full_backward_pre_hook,
)
from torch.testing._internal.common_utils import TestCase, run_tests


class Parent(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.child = torch.jit.script(torch.nn.Linear(2, 2))

    def forward(self, x):
        return self.child(x) * 2


class TestScriptedChildGlobalBackwardHooks(TestCase):
    def _modules_hooked(self, register):
        model = Parent()
        modules = []
        handle = register(lambda module, *args: modules.append(module))
        try:
            model(torch.ones(1, 2, requires_grad=True)).sum().backward()
        finally:
            handle.remove()
        return model, modules

    def test_full_backward_hook_runs_for_a_scripted_child(self):
        model, modules = self._modules_hooked(register_module_full_backward_hook)
        self.assertEqual(modules, [model.child, model])

    def test_full_backward_pre_hook_runs_for_a_scripted_child(self):
        model, modules = self._modules_hooked(register_module_full_backward_pre_hook)
        self.assertEqual(modules, [model, model.child])


if __name__ == "__main__":
    run_tests()
