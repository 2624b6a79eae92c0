"""The state_dict of a torch.jit.script-ed module departs from eager's: it holds the buffers
registered with persistent=False.

nn.Module.state_dict() leaves a non-persistent buffer out; once torch.jit.script compiles the
module (a module a ScriptModule subclass holds is compiled with it), its state_dict has the
buffer, so an eager twin's strict load_state_dict of it fails and checkpoints carry it. A
ScriptModule subclass refuses a non-persistent buffer of its own (an undocumented refusal).
Upstream: pytorch/pytorch#45012 and #65398 (open), #69250 (closed in 2026: TorchScript is
deprecated). Found by `python -m repro --explore --budget 600 --seed 0` on torch 2.13.0
(2026-12-05) and shrunk by Hypothesis. It needs only torch, prints both twins' results and exits
1 while the departure is there.

APIs: state_dict, load_state_dict.
"""

import copy
import io
import sys

import torch
import torch.ao.quantization
import torch.utils.checkpoint


class Root(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("b0", torch.linspace(0.5, 1.5, 1), persistent=True)
        self.register_buffer("b1", torch.linspace(0.5, 1.5, 1), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x



class EagerRoot(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("b0", torch.linspace(0.5, 1.5, 1), persistent=True)
        self.register_buffer("b1", torch.linspace(0.5, 1.5, 1), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
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
        # step 1: m.load_state_dict(m.state_dict())
        observed["state_dict keys"] = sorted(m.state_dict())
        m.load_state_dict(m.state_dict())
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
