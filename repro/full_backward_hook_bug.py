"""register_full_backward_hook on a torch.jit.ScriptModule subclass: minimal reproducer.

Needs only torch. Exit codes follow `git bisect run`:
  1   bug present: registration raises, or the hook is not called with the right gradients
  0   behaves like nn.Module: the hook fires once with the expected grad_input/grad_output
  125 cannot test: torch does not import, or TorchScript is disabled or raising
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
WEIGHT = torch.tensor([[1.0, -2.0], [0.5, 3.0]])


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
with torch.no_grad():
    model.linear.weight.copy_(WEIGHT)

print(f"torch {torch.__version__}")
calls: list = []
try:
    model.register_full_backward_hook(
        lambda module, grad_input, grad_output: calls.append((module, grad_input, grad_output))
    )
except RuntimeError as err:
    print(f"BUG: register_full_backward_hook raised RuntimeError: {err}")
    sys.exit(1)

x = torch.ones(1, 2, requires_grad=True)
model(x).sum().backward()
# d(sum(x @ W.T + b))/dx = ones @ W; grad_output is all ones.
expected_input_grad, expected_output_grad = torch.ones(1, 2) @ WEIGHT, torch.ones(1, 2)
ok = (
    len(calls) == 1
    and calls[0][0] is model
    and torch.equal(calls[0][1][0], expected_input_grad)
    and torch.equal(calls[0][2][0], expected_output_grad)
)
if not ok:
    print(
        f"BUG: registration succeeded but the hook misbehaved: {len(calls)} call(s), expected 1 "
        f"with grad_input {expected_input_grad.tolist()} and grad_output {expected_output_grad.tolist()}"
    )
    sys.exit(1)
print("OK: the full backward hook fired once with the right gradients, as on nn.Module")
sys.exit(0)
