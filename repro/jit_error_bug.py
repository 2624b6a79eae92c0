"""An exception raised in a torch.jit.ScriptModule subclass's script_method forward: minimal reproducer.

Needs only torch. Exit codes follow `git bisect run`:
  1   bug present: the caller gets torch.jit.Error, not the ValueError the forward raised
  0   behaves like nn.Module: the caller catches the ValueError
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
            self.linear = torch.nn.Linear(2, 2)

        @torch.jit.script_method
        def forward(self, x):
            if bool(x.sum() < 0):
                raise ValueError("negative input")
            return self.linear(x)

    model = Net()
    assert "_actual_script_module" in model.__dict__, "TorchScript is disabled (PYTORCH_JIT=0?)"
except Exception as err:
    print(f"cannot test: TorchScript is unusable: {type(err).__name__}: {err}")
    sys.exit(125)

print(f"torch {torch.__version__}")
try:
    model(-torch.ones(1, 2))
except ValueError:
    print("OK: the caller caught the ValueError the forward raised, as on nn.Module")
    sys.exit(0)
except Exception as err:
    print(f"BUG: the caller got {type(err).__name__}, not the ValueError the forward raised")
    sys.exit(1)
print("cannot test: the forward did not raise")
sys.exit(125)
