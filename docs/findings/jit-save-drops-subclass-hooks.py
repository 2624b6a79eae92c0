"""torch.jit.save of a ScriptModule subclass departs from eager's where hooks were registered on it
after construction: the loaded module runs without them, silently, where the eager twin compiled by
torch.jit.script and saved runs them.

torch.jit.script compiles a module's forward hooks and pre-hooks with its forward, so they are in
what torch.jit.save writes. A ScriptModule subclass is compiled when it is built; a hook registered
on it afterwards lives in the Python wrapper's dicts only, which torch.jit.save (of the C++ module)
never reads, and nothing warns. Found on torch 2.13.0 (2026-12-06) by `python
benchmarks/bench_explore.py --budget 600 --seed 0`, where the explorer's recording hooks (untyped,
so torch.jit.script refuses them) made the eager twin's save raise instead; this script uses a hook
TorchScript can compile. No upstream report of it found (related: pytorch/pytorch#34329, hook
support tracking, open, which says hooks should be serialisable). It needs only torch, prints both
twins' results and exits 1 while the departure is there.

APIs: torch.jit.save.
"""

import io
import sys
from typing import Tuple

import torch


def doubling(
    module: torch.nn.Module, args: Tuple[torch.Tensor], output: torch.Tensor
) -> torch.Tensor:
    return output * 2


def tripling(module: torch.nn.Module, args: Tuple[torch.Tensor]) -> Tuple[torch.Tensor]:
    return (args[0] * 3,)


class Root(torch.jit.ScriptModule):
    def __init__(self) -> None:
        super().__init__()
        self.p0 = torch.nn.Parameter(torch.ones(1))

    @torch.jit.script_method
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.p0


class EagerRoot(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.p0 = torch.nn.Parameter(torch.ones(1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.p0


def saved_and_loaded(m):
    buffer = io.BytesIO()
    torch.jit.save(m, buffer)
    buffer.seek(0)
    return torch.jit.load(buffer)


def run(m, script):
    m.register_forward_hook(doubling)
    m.register_forward_pre_hook(tripling)
    x = torch.ones(2, 1)
    loaded = saved_and_loaded(torch.jit.script(m) if script else m)
    return {
        "output": m(x).flatten().tolist(),
        "output of the saved and loaded module": loaded(x).flatten().tolist(),
    }


subclass, eager = run(Root(), script=False), run(EagerRoot(), script=True)
print(__doc__.strip().split("\n\n")[0])
for key in sorted(set(subclass) | set(eager)):
    mark = "  " if subclass.get(key) == eager.get(key) else "!="
    print(mark, key)
    print("     ScriptModule subclass:", subclass.get(key))
    print("     eager nn.Module:      ", eager.get(key))
sys.exit(1 if subclass != eager else 0)
