# Owner(s): ["module: nn"]

import torch
from torch.nn.modules.module import register_module_forward_hook
from torch.testing._internal.common_utils import TestCase, run_tests

from repro.catalogue.pieces import Net, PlainForward


class TestGlobalHooksScriptModule(TestCase):
    def _called(self, model):
        modules = []
        handle = register_module_forward_hook(lambda module, args, output: modules.append(module))
        try:
            model(torch.ones(1, 2))
        finally:
            handle.remove()
        return modules

    def test_compiled_forward_with_children_is_refused_under_global_hooks(self):
        with self.assertRaisesRegex(
            RuntimeError,
            "global module hooks would skip the children of this Net",
        ):
            self._called(Net())

    def test_python_forward_runs_global_hooks_for_each_module(self):
        model = PlainForward()
        self.assertEqual(self._called(model), [model.linear, model])

    def test_without_global_hooks_nothing_changes(self):
        model = Net()
        self.assertEqual(model(torch.ones(1, 2)), model.linear(torch.ones(1, 2)))


if __name__ == "__main__":
    run_tests()
