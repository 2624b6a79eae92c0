"""copy.copy of a torch.jit.ScriptModule subclass, then eval() on the copy: minimal reproducer.

Needs only torch. Exit codes follow `git bisect run`:
  1   bug present: the original is in eval mode too
  0   behaves like nn.Module: the original stays in training mode
  125 cannot test: torch does not import, or TorchScript is disabled
"""

import copy
import sys
import warnings

try:
    import torch
except Exception as err:  # e.g. a device backend that fails to autoload
    print(f"cannot test: import torch failed: {err}")
    sys.exit(125)

warnings.simplefilter("ignore", DeprecationWarning)  # TorchScript is deprecated since 2.10
warnings.simplefilter("ignore", FutureWarning)

try:  # the class body too: a TorchScript that is switched off may raise at `@script_method`

    class Net(torch.jit.ScriptModule):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(2, 2)

        @torch.jit.script_method
        def forward(self, x):
            return self.linear(x)

    model = Net()
    assert "_actual_script_module" in model.__dict__, "TorchScript is disabled (PYTORCH_JIT=0?)"
except Exception as err:
    print(f"cannot test: TorchScript is unusable: {type(err).__name__}: {err}")
    sys.exit(125)

print(f"torch {torch.__version__}")
copy.copy(model).eval()
if not model.training:
    print("BUG: eval() on copy.copy(model) put the original in eval mode too")
    sys.exit(1)
print("OK: the original stays in training mode, as on nn.Module")
sys.exit(0)
