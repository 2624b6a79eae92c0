# Owner(s): ["oncall: quantization"]

import torch
from torch.ao.quantization import quantize_dynamic
from torch.testing._internal.common_utils import TestCase, run_tests

from repro.catalogue.pieces import Net, Parent


class TestQuantizeDynamicScriptModule(TestCase):
    def test_script_module_is_refused(self):
        with self.assertRaisesRegex(RuntimeError, "this model is a ScriptModule"):
            quantize_dynamic(Net(), {torch.nn.Linear})

    def test_model_holding_a_script_module_is_refused(self):
        with self.assertRaisesRegex(RuntimeError, "holds the ScriptModule 'inner'"):
            quantize_dynamic(Parent(Net()), {torch.nn.Linear})

    def test_eager_model_is_still_quantized(self):
        quantized = quantize_dynamic(Parent(torch.nn.Linear(2, 2)), {torch.nn.Linear})
        self.assertIsInstance(quantized.inner, torch.ao.nn.quantized.dynamic.Linear)


if __name__ == "__main__":
    run_tests()
