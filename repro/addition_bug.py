"""register_buffer on a torch.jit.ScriptModule subclass after __init__: minimal reproducer.

Needs only torch. Exit codes follow `git bisect run`:
  1   bug present: refused with "cannot assign buffer before Module.__init__() call"
  0   behaves like nn.Module: the buffer is added, or refused with a message that says why
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
            return self.linear(x)

    model = Net()
    assert "_actual_script_module" in model.__dict__, "TorchScript is disabled (PYTORCH_JIT=0?)"
except Exception as err:
    print(f"cannot test: TorchScript is unusable: {type(err).__name__}: {err}")
    sys.exit(125)

print(f"torch {torch.__version__}")
try:
    model.register_buffer("extra", torch.ones(1))
except Exception as err:
    if "before Module.__init__() call" in str(err):
        print(f"BUG: refused after __init__ ran, with a message about __init__: {err}")
        sys.exit(1)
    print(f"OK: refused with a message of its own: {type(err).__name__}: {err}")
    sys.exit(0)
print("OK: the buffer was added, as on nn.Module")
sys.exit(0)
