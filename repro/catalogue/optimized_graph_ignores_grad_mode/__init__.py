"""Once optimized, a compiled forward ignores ``no_grad``, ``inference_mode`` and ``torch.func``.

TorchScript's profiling executor runs a ``script_method`` forward as it is for its first call, then
builds an optimized graph specialised on what that run profiled, with autograd wired in as a
differentiable subgraph. Later calls reuse it without checking the grad mode or functorch's
transforms: under ``torch.no_grad()`` the output still requires grad (a graph is recorded and kept
alive); under ``torch.inference_mode()`` the call fails ("Inference tensors cannot be saved for
backward"); under ``torch.func.jvp`` the tangents are zero and under ``torch.func.vmap`` the output
loses ``requires_grad`` or the call fails. It shows on forwards with more than one operation around
their children (a single ``F.linear`` or child call leaves nothing to optimize), and on
``torch.jit.script`` of the same eager module too: the executor is TorchScript's, not the
subclass's. The cause is C++ (the profiling executor), which wheels do not ship as source.
"""

from __future__ import annotations

import ast
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from repro.catalogue import edits
from repro.catalogue.bug import scope
from repro.catalogue.declare import declare
from repro.catalogue.fixes import PatchError, Sources
from repro.catalogue.texts import inserted
from repro.source_checks import SCRIPT_PY, find, method
from repro.traits import GENERATED, Traits
from repro.vocabulary import Verdict

if TYPE_CHECKING:  # the engine imports torch; the tracker reads signatures without it
    from repro.engine.oracle import ScenarioResult

EXECUTOR = (
    "torch/csrc/jit/runtime/profiling_graph_executor_impl.cpp at upstream commit "
    "00514998856aba55fe374e32da30d7dc3f96fd53 (ProfilingGraphExecutorImpl::getOptimizedPlanFor)"
)
FIRST_CALL = "first call: output"  # what the explorer notes of a case's first call
APIS = ("torch.no_grad", "torch.inference_mode", "torch.func.vmap", "torch.func.jvp", "torch.func.grad")
AROUND = ("child first", "child between", "child last", "several children")
SHAPES_BY_MODE = {
    "torch.no_grad": ((*AROUND, "buffers only"), "no graph recorded; hooks run"),
    "torch.inference_mode": ((*AROUND, "buffers only"), "an inference tensor out; hooks run"),
    "torch.func.vmap": (AROUND, "maps the model over a batch dimension"),
    "torch.func.jvp": (AROUND, "forward-mode derivative of the model"),
}


def unoptimized() -> AbstractContextManager[Any]:
    """``Workaround.apply``: TorchScript's own switch; the executor decides at a forward's first calls."""
    import torch

    return torch.jit.optimized_execution(False)


def root_cause(evidence: list[str]) -> list[str]:
    import torch

    from repro.catalogue.measure import line_of

    def fresh() -> torch.nn.Module:
        """A new class each time: instances of one class share its compiled forward and what it profiled."""

        class Net(torch.jit.ScriptModule):
            def __init__(self) -> None:
                super().__init__()
                self.linear = torch.nn.Linear(2, 2)

            @torch.jit.script_method
            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return self.linear(x) * 2.0 + 1.0

        return Net()

    x = torch.ones(1, 2, requires_grad=True)
    with torch.no_grad():
        before = fresh()(x).requires_grad  # a first call: not optimized yet
    model = fresh()
    model(x)
    model(x)  # the second call runs the optimized graph
    with torch.no_grad():
        after = model(x).requires_grad
    return [
        "A script_method forward is compiled by TorchScript "
        f"({line_of('torch/jit/_script.py', 'def script_method')}), and every call runs in its graph executor.",
        "TorchScript's profiling executor runs a compiled forward as it is, profiling it, then builds an "
        f"optimized graph with autograd as a differentiable subgraph ({EXECUTOR}).",
        "Later calls reuse that graph; nothing in it depends on the grad mode or on functorch's transforms.",
        f"Measured: under torch.no_grad() the output requires grad {before} on a first call, {after} once the "
        "forward is optimized (eager: False).",
    ]


def recognise(result: ScenarioResult) -> bool:
    """A call under one of the four departs: it differs from eager's, or the interpreter failed. The
    call itself (the scenario's own API): a generated case's APIs are every step's so far, and a copy
    after a call under no_grad departing its own way is not this bug's."""
    if result.scenario.api not in APIS or result.verdict not in (Verdict.RAISES, Verdict.DIFFERS):
        return False
    if result.scenario.model == GENERATED and not _its_own(result):
        return False
    return result.verdict == Verdict.DIFFERS or "failed in the TorchScript interpreter" in result.detail


def _its_own(result: ScenarioResult) -> bool:
    """On a generated model, what only this bug does. Not a departure at the case's first call of its
    model (the explorer notes that output as the first call's; the engine's scenarios call the model
    once before theirs): nothing is optimized yet. Under jvp, a tangent without autograd history where
    eager's has one: a compiled ``x * 2`` (aten::mul.Scalar) gives one without eager's zero-gradient
    paths to the parameters before it on any call (the open finding
    jvp-tangent-of-compiled-multiply-by-number), and this bug's workaround leaves that as it is."""
    scripted, eager = (side.observation if side is not None else {} for side in (result.scripted, result.eager))
    if FIRST_CALL in scripted or FIRST_CALL in eager:
        return False
    if result.scenario.api != "torch.func.jvp":
        return True
    outputs = [key for key in eager if key.endswith(": output") and isinstance(eager[key], dict)]
    return any(eager[key].get("requires_grad") and not scripted.get(key, {}).get("requires_grad") for key in outputs)


# --- fixing it: a compiled forward called under no_grad, inference_mode or a torch.func transform
# runs its graph through an executor of its own, unoptimized (what torch.jit.optimized_execution(False)
# from the first call does), so the optimized graph, profiled in plain grad mode, runs only there.

UNOPTIMIZED = [*inserted(__name__, "_UnoptimizedForward"), "", ""]
GET = list(inserted(__name__, "_CachedForward.__get__"))


def run_other_modes_unoptimized(sources: Sources) -> dict[str, str]:
    """``_CachedForward.__get__`` hands out ``_UnoptimizedForward`` outside plain grad mode."""
    text, tree = edits.opened(sources, SCRIPT_PY)
    if find(tree, ast.ClassDef, "_UnoptimizedForward"):
        raise PatchError(f"{SCRIPT_PY} already defines _UnoptimizedForward.")
    cached, get = find(tree, ast.ClassDef, "_CachedForward"), method(tree, "_CachedForward", "__get__")
    if cached is None or get is None:
        raise PatchError(f"{SCRIPT_PY}: no _CachedForward.__get__ to route calls through.")
    text = edits.replaced_by(text, get, GET)
    return {SCRIPT_PY: edits.insert(text, cached.lineno, UNOPTIMIZED, "")}


SCOPE = sum((scope(shapes, ("script_method",), case=name) for shapes, name in SHAPES_BY_MODE.values()), ())


def reach(t: Traits) -> bool:
    """A compiled forward of two operations or more."""
    return t.compiled_ops


BUG = declare(__name__)
