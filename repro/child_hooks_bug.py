"""A forward hook on a ScriptModule-subclass child under a script_method forward: minimal reproducer.

Needs only torch. Exit codes follow `git bisect run`:
  1   bug present: the hook registers without error and never runs
  0   behaves like nn.Module: the hook runs once per call
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

try:  # the class bodies too: a TorchScript that is switched off may raise at `@script_method`

    class Child(torch.jit.ScriptModule):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(2, 2)

        @torch.jit.script_method
        def forward(self, x):
            return self.linear(x)

    class Net(torch.jit.ScriptModule):
        def __init__(self):
            super().__init__()
            self.child = Child()

        @torch.jit.script_method
        def forward(self, x):
            return self.child(x)

    model = Net()
    assert "_actual_script_module" in model.__dict__, "TorchScript is disabled (PYTORCH_JIT=0?)"
except Exception as err:
    print(f"cannot test: TorchScript is unusable: {type(err).__name__}: {err}")
    sys.exit(125)

print(f"torch {torch.__version__}")
calls = []
model.child.register_forward_hook(lambda module, args, output: calls.append(module))
model(torch.ones(1, 2))
if not calls:
    print("BUG: the forward hook on model.child registered without error and never ran")
    sys.exit(1)
print(f"OK: the forward hook on model.child ran {len(calls)} time(s), as on nn.Module")
sys.exit(0)
