"""``torch.compile`` of a ScriptModule subclass compiles nothing, silently.

``torch.compile(model)`` wraps an ``nn.Module`` in an ``OptimizedModule`` whose calls dynamo traces.
Dynamo cannot trace a ScriptModule's compiled code, and graph-breaks at it: a model that is a
ScriptModule subclass, or that holds one, runs uncompiled, with no error and no warning (a counting
backend is never called). torch refuses ``torch.jit.script`` results at the entry with a clear
error since pytorch/pytorch#177089 ("torch.compile does not support compiling torch.jit.script or
torch.jit.freeze models directly"), but the check is ``type(fn) is RecursiveScriptModule``: a
subclass of ``torch.jit.ScriptModule`` is let through. Related: pytorch/pytorch#150089 (compiling a
scripted model), #93485 (TorchScript and torch.compile together).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from repro.catalogue.bug import ROOTS, Bug, Workaround, scope
from repro.vocabulary import Verdict

if TYPE_CHECKING:  # the engine imports torch; the tracker reads signatures without it
    from repro.engine.oracle import ScenarioResult

GRAPHS = "graphs captured"
ENTRY_CHECK = "if type(fn) is torch.jit._script.RecursiveScriptModule:"


def root_cause(evidence: list[str]) -> list[str]:
    import torch
    import torch._dynamo

    from repro.catalogue.measure import line_of, subclass

    torch._dynamo.reset()
    graphs: list[object] = []

    def counting(graph: Any, example_inputs: Any) -> Any:
        graphs.append(graph)
        return graph.forward

    model = subclass()
    torch.compile(model, backend=counting)(torch.ones(1, 2))
    torch._dynamo.reset()
    return [
        "torch.compile(model) wraps any nn.Module in an OptimizedModule; it refuses only an object whose "
        f"type is exactly RecursiveScriptModule ({line_of('torch/_dynamo/eval_frame.py', ENTRY_CHECK)}), "
        "so a subclass of torch.jit.ScriptModule is wrapped.",
        "Dynamo cannot trace TorchScript's compiled code: it graph-breaks at the ScriptModule's call, "
        "without an error or a warning, and runs it uncompiled.",
        f"Measured: the counting backend was called {len(graphs)} times (on the eager twin: once).",
    ]


def recognise(result: ScenarioResult) -> bool:
    """Both ran; the backend captured no graph of the ScriptModule side and some of eager's."""
    script = result.script.observation.get(GRAPHS) if result.script else None
    eager = result.eager.observation.get(GRAPHS) if result.eager else None
    return result.verdict == Verdict.DIFFERS and script == 0 and bool(eager)


PASTE = """import torch

class Net(torch.jit.ScriptModule):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(2, 2)

    @torch.jit.script_method
    def forward(self, x):
        return self.linear(x)

graphs = []

def backend(graph, example_inputs):
    graphs.append(graph)
    return graph.forward

torch.compile(Net(), backend=backend)(torch.ones(1, 2))
assert graphs, "torch.compile(model) compiled nothing and said nothing"
"""

BUG = Bug(
    id="compile-subclass-silent",
    title="torch.compile of a ScriptModule subclass compiles nothing, silently",
    upstream="not reported yet (related: pytorch/pytorch#150089, #177089)",
    apis=("torch.compile",),
    scope=scope(ROOTS)
    + scope(("in eager parent", "in eager parent, with child"))
    + scope(("scripted child",), ("torch.jit.script",)),
    symptom="the backend is never called: the model runs uncompiled, with no error or warning",
    recognise=recognise,
    script="repro/compile_subclass_bug.py",
    needs=("torch.compile",),
    paste=PASTE,
    explanation=__doc__,
    no_static="dynamo's graph break at a ScriptModule is decided while tracing, not by one line of source",
    root_cause=root_cause,
    workaround=Workaround(
        name="none",
        summary="none: dynamo cannot trace TorchScript; compile an eager nn.Module version of the model",
        usage="compile the eager model (no torch.jit.ScriptModule base class) with torch.compile",
        apply=None,
        in_torch_terms="none within TorchScript: torch.compile an eager nn.Module with the same forward",
        tried=("torch.compile(model.forward): the backend is not called either (0 graphs, either forward style)",),
    ),
)
