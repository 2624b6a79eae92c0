# Owner(s): ["oncall: export"]

import torch
from torch.testing._internal.common_utils import TestCase, run_tests

from repro.catalogue.pieces import Net, Parent


class TestExportScriptedSubmodule(TestCase):
    def test_script_module_subclass_child_is_refused(self):
        with self.assertRaisesRegex(ValueError, r"holds a ScriptModule \('inner'\)"):
            torch.export.export(Parent(Net()), (torch.ones(1, 2),))

    def test_scripted_child_is_refused(self):
        scripted = torch.jit.script(torch.nn.Linear(2, 2))
        with self.assertRaisesRegex(ValueError, r"holds a ScriptModule \('inner'\)"):
            torch.export.export(Parent(scripted), (torch.ones(1, 2),))

    def test_eager_model_still_exports(self):
        exported = torch.export.export(Parent(torch.nn.Linear(2, 2)), (torch.ones(1, 2),))
        self.assertEqual(len(exported.graph_signature.user_inputs), 1)


if __name__ == "__main__":
    run_tests()
