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

import ast
from typing import TYPE_CHECKING, Any

from repro.catalogue import edits
from repro.catalogue.bug import IN_EAGER_PARENT, ROOTS, scope
from repro.catalogue.declare import declare
from repro.catalogue.texts import inserted
from repro.source_checks import find
from repro.traits import Traits
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
    """Both ran; the backend captured fewer graphs of the ScriptModule side than of eager's (none, where
    the model is one; fewer, where dynamo runs compiled children outside its graphs)."""
    scripted = result.scripted.observation.get(GRAPHS) if result.scripted else None
    eager = result.eager.observation.get(GRAPHS) if result.eager else None
    fewer = isinstance(scripted, int) and isinstance(eager, int) and scripted < eager
    return result.verdict == Verdict.DIFFERS and fewer


# --- fixing it: dynamo cannot trace TorchScript, so no Python change makes the backend see the model; the
# patch makes torch.compile refuse any model that is or holds a ScriptModule, at the entry where it
# already refuses a torch.jit.script result (loud).

EVAL_FRAME = "torch/_dynamo/eval_frame.py"
MODULE_BRANCH = "isinstance(fn, torch.nn.Module)"
REFUSAL = "torch.compile does not trace TorchScript"


def _module_branch(tree: ast.Module) -> ast.stmt | None:
    context = find(tree, ast.ClassDef, "_TorchDynamoContext")
    return edits.statement(context, edits.if_testing(MODULE_BRANCH)) if context else None


refuse_script_modules = edits.Insertion(  # where _TorchDynamoContext.__call__ wraps a module
    EVAL_FRAME,
    _module_branch,
    edits.Where.AT_START,
    inserted(__name__, "refuse_script_modules"),
    missing=f"{EVAL_FRAME}: _TorchDynamoContext has no 'if {MODULE_BRANCH}:' branch.",
    marker=REFUSAL,
    already="already refuses TorchScript",
)

SCOPE = scope(ROOTS) + scope(IN_EAGER_PARENT) + scope(("scripted child",), ("torch.jit.script",))


def reach(t: Traits) -> bool:
    """Any model holding a ScriptModule."""
    return t.subclass or t.compiled


BUG = declare(__name__)
