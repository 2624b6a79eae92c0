"""torch.func.jvp through a torch.jit.script-ed module that multiplies by a Python number departs
from eager's: backward from the tangent leaves a parameter's gradient None where eager's is zeros.

TorchScript compiles `x * 2` to aten::mul.Scalar (the number a constant); eager Python calls
aten::mul.Tensor with the number wrapped in a tensor. Their forward-mode formulas differ:
mul.Tensor's tangent (self_t * other + other_t * self, the number's tangent zeros) keeps an autograd
path through the primal to every parameter before it, mul.Scalar's (self_t * other) does not. Here
the compiled multiply is the root's forward hook (torch.jit.script compiles a module's hooks); a
forward that says `* 2` itself departs the same. The values agree; the gradient's presence does not,
and optimizers skip a parameter whose gradient is None where they step one of zeros (the docs of
torch.optim.Optimizer.zero_grad). On every call, first or optimized: not
optimized-graph-ignores-grad-mode, whose recogniser claimed it until 2026-12-06, and which
torch.jit.optimized_execution(False) does not change. No upstream report of it found (related:
pytorch/pytorch#73972, forward AD through a scripted function going wrong on its second call, open).
Found on torch 2.13.0 (2026-12-06) by `python -m repro --explore --workarounds --bug
optimized-graph-ignores-grad-mode --budget 60 --seed 3` after earlier runs had filled its
--database; the case is one call. It needs only torch, prints both twins' results and exits 1 while
the departure is there.

APIs: torch.func.jvp.
"""


import copy
import io
import sys
from typing import Tuple

import torch
import torch.ao.quantization
import torch.utils.checkpoint


def doubling_hook(module, args: Tuple[torch.Tensor], output: torch.Tensor) -> torch.Tensor:
    return output * 2


class Root(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.c0 = torch.nn.Linear(2, 2)
        self.register_forward_hook(doubling_hook)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.c0(x)
        return x



class EagerRoot(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.c0 = torch.nn.Linear(2, 2)
        self.register_forward_hook(doubling_hook)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.c0(x)
        return x


def built(cls, script=False):
    """Both twins from the same seed, values rounded to eighths, as the explorer built them."""
    torch.manual_seed(0)
    root = torch.jit.script(cls()) if script else cls()
    with torch.no_grad():
        for t in [*root.parameters(), *root.buffers()]:
            t.copy_(torch.round(t * 8) / 8)
    return root


def shown(value):
    if isinstance(value, torch.Tensor):
        values = [round(v, 4) for v in value.detach().flatten().tolist()]
        return f"{value.dtype} {list(value.shape)} requires_grad={value.requires_grad} {values}"
    if isinstance(value, torch.nn.Module):
        name = getattr(value, "original_name", type(value).__name__)
        return f"<{name.removeprefix('Eager')}>"  # the eager twin's classes are named Eager...
    if isinstance(value, (list, tuple)):
        return [shown(v) for v in value]
    if isinstance(value, dict):
        return {k: shown(v) for k, v in value.items()}
    return value


def doubled(module, args, *rest):  # a changing hook: twice the output it gets (forward hooks)
    return rest[-1] * 2


def doubled_args(module, args, *kwargs):  # a changing pre-hook: twice the arguments it gets
    twice = tuple(a * 2 for a in args)
    return (twice, kwargs[0]) if kwargs else twice


def hook(seen, label, change=None):
    def record(*args):
        seen.append((label, shown(args)))
        return change(*args) if change else None

    return record


def run(make):
    """The steps on one twin: what the last one did (what it observed, or its error)."""
    seen, handles, observed = [], [], {}

    def counting(graph, example_inputs):  # a torch.compile backend that notes each graph
        seen.append("torch.compile backend")
        return graph.forward

    try:
        m = make()
        # step 1: call (jvp), then backward
        x = torch.tensor([
            [1.0, 2.0],
            [-3.0, 0.5],
        ], requires_grad=True)
        y = torch.func.jvp(m, (x.detach(),), (torch.ones_like(x),))[1]
        observed["output"] = y
        if y.requires_grad:
            y.sum().backward()
            tensors = [*m.named_parameters(), *m.named_buffers(), ("input", x)]
            observed["gradients"] = {n: t.grad for n, t in tensors}
            m.zero_grad()
        return {"hook calls": seen, **shown(observed)}
    except Exception as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else ""
        return {"hook calls": seen, "raised": f"{type(err).__name__}: {first}"}
    finally:
        for handle in handles:
            handle.remove()


subclass, eager = run(lambda: built(Root, script=True)), run(lambda: built(EagerRoot))
print(__doc__.strip())
for key in sorted(set(subclass) | set(eager)):
    mark = "  " if subclass.get(key) == eager.get(key) else "!="
    print(mark, key)
    print("     ScriptModule subclass:", subclass.get(key))
    print("     eager nn.Module:      ", eager.get(key))
sys.exit(1 if subclass != eager else 0)
