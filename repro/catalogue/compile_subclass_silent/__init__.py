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
from repro.catalogue.bug import ROOTS, Bug, Departure, Workaround, scope
from repro.catalogue.fixes import Fixes, PatchError, Sources, UpstreamPatch, regression_test
from repro.catalogue.texts import rendered
from repro.source_checks import find
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
    scripted = result.scripted.observation.get(GRAPHS) if result.scripted else None
    eager = result.eager.observation.get(GRAPHS) if result.eager else None
    return result.verdict == Verdict.DIFFERS and scripted == 0 and bool(eager)


PASTE = rendered(__name__, "paste.py")  # paste.py beside this file, as users paste it

# --- fixing it: dynamo cannot trace TorchScript, so no Python change makes the backend see the model; the
# patch makes torch.compile refuse any model that is or holds a ScriptModule, at the entry where it
# already refuses a torch.jit.script result (loud).

EVAL_FRAME = "torch/_dynamo/eval_frame.py"
MODULE_BRANCH = "isinstance(fn, torch.nn.Module)"
REFUSAL = "torch.compile does not trace TorchScript"
GUARD = [
    "scripted = [",
    "    name",
    "    for name, sub in fn.named_modules()",
    "    if isinstance(sub, torch.jit.ScriptModule)",
    "]",
    "if scripted and type(fn) is not torch.jit._script.RecursiveScriptModule:",
    "    what = (",
    '        "is a ScriptModule"',
    '        if scripted[0] == ""',
    '        else f"holds the ScriptModule {scripted[0]!r}"',
    "    )",
    "    raise RuntimeError(",
    f'        f"{REFUSAL}: this model {{what}}, "',
    '        "which would run uncompiled. "',
    '        "Compile an eager nn.Module version of it instead."',
    "    )",
]


def refuse_script_modules(sources: Sources) -> dict[str, str]:
    """The branch of ``_TorchDynamoContext.__call__`` that wraps a module refuses one holding TorchScript."""
    text = edits.source(sources, EVAL_FRAME)
    tree = edits.parse(EVAL_FRAME, text)
    context = find(tree, ast.ClassDef, "_TorchDynamoContext")
    branch = edits.statement(context, edits.if_testing(MODULE_BRANCH)) if context else None
    if not isinstance(branch, ast.If):
        raise PatchError(f"{EVAL_FRAME}: _TorchDynamoContext has no 'if {MODULE_BRANCH}:' branch.")
    edits.unpatched(EVAL_FRAME, text, REFUSAL, "already refuses TorchScript")
    return {EVAL_FRAME: edits.at_start(text, branch, GUARD)}


FIXES = Fixes(
    patch=UpstreamPatch(
        summary="torch.compile refuses a model that is or holds a ScriptModule, beside its refusal of a "
        "torch.jit.script result",
        files=(EVAL_FRAME,),
        edit=refuse_script_modules,
        test=regression_test(__name__, "test/dynamo/test_compile_script_module.py"),
        refusal=REFUSAL,
        cpp="torch/csrc/jit/api/module.h: a ScriptModule's forward is a C++ torch::jit::Method, which dynamo's "
        "bytecode tracer never sees",
    ),
)

BUG = Bug(
    id="compile-subclass-silent",
    number=12,
    headline="`torch.compile(model)` compiles nothing, silently",
    title="torch.compile of a ScriptModule subclass compiles nothing, silently",
    upstream="not reported yet (related: pytorch/pytorch#150089, #177089)",
    apis=("torch.compile",),
    scope=scope(ROOTS)
    + scope(("in eager parent", "in eager parent, with child"))
    + scope(("scripted child",), ("torch.jit.script",)),
    symptom="the backend is never called: the model runs uncompiled, with no error or warning",
    departures=(
        Departure(
            "torch.compile: a counting backend captures the forward; outputs and hooks as eager",
            "script_method",
            "differs",
            scripted={"hook calls": [], "graphs captured": 0},
            eager={"hook calls": [], "graphs captured": 1},
        ),
    ),
    recognise=recognise,
    needs=("torch.compile",),
    paste_ends="AssertionError: torch.compile(model) compiled nothing and said nothing",
    paste=PASTE,
    explanation=__doc__,
    no_static="dynamo's graph break at a ScriptModule is decided while tracing, not by one line of source",
    root_cause=root_cause,
    fixes=FIXES,
    workaround=Workaround(
        name="none",
        summary="none: dynamo cannot trace TorchScript; compile an eager nn.Module version of the model",
        usage="compile the eager model (no torch.jit.ScriptModule base class) with torch.compile",
        apply=None,
        in_torch_terms="none within TorchScript: torch.compile an eager nn.Module with the same forward",
        tried=("torch.compile(model.forward): the backend is not called either (0 graphs, either forward style)",),
    ),
)
