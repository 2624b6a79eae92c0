# Owner(s): ["oncall: jit"]

import torch
from torch.testing._internal.common_utils import TestCase, run_tests

from repro.catalogue.pieces import Scaling


class Net(torch.jit.ScriptModule):
    def __init__(self):
        super().__init__()
        self.scaling = Scaling()

    @torch.jit.script_method
    def forward(self, x):
        return self.scaling(x)


class TestScriptModuleNonPersistentBuffers(TestCase):
    def test_script_leaves_a_non_persistent_buffer_out_of_state_dict(self):
        compiled = torch.jit.script(Scaling())
        self.assertEqual(list(compiled.state_dict()), [])
        compiled.load_state_dict(Scaling().state_dict())  # strict: nothing missing
        self.assertEqual(compiled(torch.ones(2)), torch.ones(2))

    def test_a_compiled_child_of_a_subclass_leaves_it_out(self):
        self.assertEqual(list(Net().state_dict()), [])


if __name__ == "__main__":
    run_tests()
