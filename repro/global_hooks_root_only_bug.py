"""Global module forward hooks on a torch.jit.ScriptModule subclass with a script_method forward.

Needs only torch. Exit codes follow `git bisect run`:
  1   bug present: the global hook runs for the model but not for its child
  0   behaves like nn.Module: the hook runs for the child, then for the model
  125 cannot test: torch does not import, lacks global module hooks, or TorchScript is disabled
"""

import sys
import warnings

try:
    import torch
    from torch.nn.modules.module import register_module_forward_hook
except Exception as err:  # a device backend that fails to autoload, or a torch without the API
    print(f"cannot test: {type(err).__name__}: {err}")
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
seen: list = []
handle = register_module_forward_hook(
    lambda module, args, output: seen.append(getattr(module, "original_name", type(module).__name__))
)
try:
    model(torch.ones(1, 2))
finally:
    handle.remove()
if seen != ["Linear", "Net"]:
    print(f"BUG: the global forward hook ran for {seen}; nn.Module runs it for Linear, then Net")
    sys.exit(1)
print("OK: the global forward hook ran for the child and the model, as on nn.Module")
sys.exit(0)
