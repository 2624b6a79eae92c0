"""Assigning None to a parameter of a torch.jit.ScriptModule subclass: minimal reproducer.

Needs only torch. Exit codes follow `git bisect run`:
  1   bug present: the assignment raises (the compiled module types `weight` as Tensor)
  0   behaves like nn.Module: the parameter is dropped, `model.weight` reads None
  125 cannot test: torch does not import, or TorchScript is disabled
"""

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
            self.weight = torch.nn.Parameter(torch.ones(2, 2))

        @torch.jit.script_method
        def forward(self, x):
            return x @ self.weight

    model = Net()
    assert "_actual_script_module" in model.__dict__, "TorchScript is disabled (PYTORCH_JIT=0?)"
except Exception as err:
    print(f"cannot test: TorchScript is unusable: {type(err).__name__}: {err}")
    sys.exit(125)

print(f"torch {torch.__version__}")
try:
    model.weight = None
except RuntimeError as err:
    print(f"BUG: model.weight = None raised {type(err).__name__}: {str(err).splitlines()[0]}")
    sys.exit(1)
if model.weight is not None:
    print(f"BUG: after model.weight = None, model.weight reads {model.weight!r}")
    sys.exit(1)
print("OK: model.weight = None dropped the parameter, as on nn.Module")
sys.exit(0)
