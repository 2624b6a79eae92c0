"""Module.compile() on a torch.jit.ScriptModule subclass: minimal reproducer.

Needs only torch (Module.compile imports dynamo: this takes seconds). Exit codes follow
`git bisect run`:
  1   bug present: after compile(), a call never goes through torch.compile
  0   behaves like nn.Module: the compile backend sees the call
  125 cannot test: torch does not import, has no Module.compile, or TorchScript is disabled
"""

import sys
import warnings

try:
    import torch
except Exception as err:  # e.g. a device backend that fails to autoload
    print(f"cannot test: import torch failed: {err}")
    sys.exit(125)
if not hasattr(torch.nn.Module, "compile"):
    print(f"cannot test: torch {torch.__version__} has no Module.compile (added in 2.2)")
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
graphs: list = []


def backend(graph_module, example_inputs):  # dynamo calls this for each graph it compiles
    graphs.append(graph_module)
    return graph_module.forward


model.compile(backend=backend)
model(torch.ones(1, 2))
if not graphs:
    print(
        "BUG: Module.compile() had no effect: the call never went through torch.compile "
        f"(the wrapper's _compiled_call_impl is {model.__dict__.get('_compiled_call_impl')})"
    )
    sys.exit(1)
print("OK: after Module.compile() the call went through torch.compile, as on nn.Module")
sys.exit(0)
