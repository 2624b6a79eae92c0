"""Non-reentrant torch.utils.checkpoint over a script_method forward: minimal reproducer.

Needs only torch. Exit codes follow `git bisect run`:
  1   bug present: backward through the checkpoint fails inside the TorchScript interpreter
  0   behaves like nn.Module: backward runs and the input gets its gradient
  125 cannot test: torch does not import, has no early stop (before 2.1), or TorchScript is disabled
"""

import sys
import warnings

try:
    import torch
    from torch.utils.checkpoint import checkpoint, set_checkpoint_early_stop  # noqa: F401  (early stop exists)
except Exception as err:  # e.g. a device backend that fails to autoload, or a torch without early stop
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
x = torch.ones(1, 2, requires_grad=True)
try:
    checkpoint(model, x, use_reentrant=False).sum().backward()
except RuntimeError as err:
    print(f"BUG: backward through checkpoint(model, x, use_reentrant=False) raised: {str(err).splitlines()[0]}")
    sys.exit(1)
print("OK: non-reentrant checkpoint over the script_method forward ran backward, as on nn.Module")
sys.exit(0)
