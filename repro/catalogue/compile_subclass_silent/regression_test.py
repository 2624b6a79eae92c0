# Owner(s): ["module: dynamo"]

import torch
from torch.testing._internal.common_utils import TestCase, run_tests

from repro.catalogue.pieces import Net, Parent


class TestCompileScriptModule(TestCase):
    def test_script_module_subclass_is_refused(self):
        with self.assertRaisesRegex(RuntimeError, "this model is a ScriptModule"):
            torch.compile(Net(), backend="eager")

    def test_model_holding_a_script_module_is_refused(self):
        with self.assertRaisesRegex(RuntimeError, "holds the ScriptModule 'inner'"):
            torch.compile(Parent(Net()), backend="eager")

    def test_eager_model_still_compiles(self):
        graphs = []

        def backend(graph_module, example_inputs):
            graphs.append(graph_module)
            return graph_module.forward

        torch.compile(Parent(torch.nn.Linear(2, 2)), backend=backend)(torch.ones(1, 2))
        self.assertEqual(len(graphs), 1)


if __name__ == "__main__":
    run_tests()
