"""copy.deepcopy of a torch.jit.ScriptModule subclass: minimal reproducer.

Needs only torch. Exit codes follow `git bisect run`:
  1   bug present: the copy is a RecursiveScriptModule, without the class and its hooks
  0   behaves like nn.Module: the copy is the user's class and runs its hooks
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
calls = []
model.register_forward_hook(lambda module, args, output: calls.append(module))
clone = copy.deepcopy(model)
clone(torch.ones(1, 2))
if type(clone) is not Net or not calls:
    print(
        f"BUG: copy.deepcopy returned a {type(clone).__name__}; its forward hook ran {len(calls)} times "
        "(nn.Module: the same class, and the hook runs once)"
    )
    sys.exit(1)
print("OK: copy.deepcopy kept the class and the forward hook, as on nn.Module")
sys.exit(0)
