"""copy.copy of a torch.jit.script-ed module departs from eager's where it holds a ScriptModule
subclass: in the copy that child is a bare RecursiveScriptModule, without its class or hooks.

RecursiveScriptModule.__copy__ wraps a shallow copy of the C++ module (torch.jit._recursive.
wrap_cpp_module), which makes a new compiled wrapper for every child: a child that was the
user's ScriptModule subclass (its hooks and Python methods on it) is not that class in the copy,
so its hooks stop running where Python calls it. Eager's shallow copy shares its children. The
deep copy goes the same way (RecursiveScriptModule.__deepcopy__; the explorer attributes that one
to deepcopy-drops-subclass, whose patch covers a subclass root only). No upstream report found
(related: pytorch/pytorch#18106). Found by `python -m repro --explore --budget 400 --seed 0` on
torch 2.13.0 (2026-12-06) and shrunk by Hypothesis. It needs only torch, prints both twins'
results and exits 1 while the departure is there.

APIs: copy.copy.
"""

import copy
import io
import sys

import torch
import torch.ao.quantization
import torch.utils.checkpoint


class Root_1_2(torch.jit.ScriptModule):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


class Root_1(torch.jit.ScriptModule):
    def __init__(self) -> None:
        super().__init__()
        self.c2 = Root_1_2()

    @torch.jit.script_method
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.c2(x)
        return x


class Root(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.c1 = Root_1()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.c1(x)
        return x



class EagerRoot_1_2(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


class EagerRoot_1(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.c2 = EagerRoot_1_2()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.c2(x)
        return x


class EagerRoot(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.c1 = EagerRoot_1()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.c1(x)
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
        # step 1: m = copy.copy(m)
        original = m
        m = copy.copy(m)
        same = "the same class" if type(m) is type(original) else type(m).__name__
        observed["the copy's class"] = same
        copied = dict(m.named_modules())
        observed["the copy's children of another class"] = [
            n for n, s in original.named_modules() if n and type(copied.get(n)) is not type(s)
        ]
        leaves = [n for n, p in m.named_parameters() if not p.is_leaf]
        observed["copy's parameters that are not leaves"] = leaves
        observed["training"] = [s.training for s in m.modules()]
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
