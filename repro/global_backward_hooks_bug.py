"""Global module backward hooks on a torch.jit.ScriptModule subclass: minimal reproducer.

Needs only torch. Exit codes follow `git bisect run`:
  1   bug present: forward+backward raises, or the hook does not run for the model and its child
  0   behaves like nn.Module: the global hook runs once for the model and once for its child
  125 cannot test: torch does not import, lacks global module hooks, or TorchScript is disabled
"""

import sys
import warnings

try:
    import torch
    from torch.nn.modules.module import register_module_full_backward_hook
except Exception as err:  # a device backend that fails to autoload, or a torch without the API
    print(f"cannot test: {type(err).__name__}: {err}")
    sys.exit(125)

warnings.simplefilter("ignore", DeprecationWarning)  # TorchScript is deprecated since 2.10
warnings.simplefilter("ignore", FutureWarning)

try:  # the class body too: a TorchScript that is switched off may raise here

    class Net(torch.jit.ScriptModule):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(2, 2)

        def forward(self, x):  # a plain forward, as torch_npu's tests write it
            return self.linear(x)

    model = Net()
    assert "_actual_script_module" in model.__dict__, "TorchScript is disabled (PYTORCH_JIT=0?)"
except Exception as err:
    print(f"cannot test: TorchScript is unusable: {type(err).__name__}: {err}")
    sys.exit(125)

print(f"torch {torch.__version__}")
seen: list = []
handle = register_module_full_backward_hook(
    lambda module, grad_input, grad_output: seen.append(getattr(module, "original_name", type(module).__name__))
)
try:
    model(torch.ones(1, 2, requires_grad=True)).sum().backward()
except RuntimeError as err:
    print(f"BUG: forward+backward with a global full backward hook raised RuntimeError: {err}")
    sys.exit(1)
finally:
    handle.remove()
if sorted(seen) != ["Linear", "Net"]:
    print(f"BUG: the global backward hook ran for {seen}; nn.Module runs it for Linear and Net")
    sys.exit(1)
print("OK: the global backward hook ran for the model and its child, as on nn.Module")
sys.exit(0)
