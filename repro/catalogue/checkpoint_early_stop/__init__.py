"""``torch.utils.checkpoint.checkpoint(model, x, use_reentrant=False)`` fails on a ``script_method``.

Non-reentrant checkpointing recomputes the forward in backward and, by default (early stop), stops
the recomputation as soon as it has every tensor it needs, by raising an exception from a
saved-tensor hook inside the forward. In a compiled ``forward`` that exception crosses the
TorchScript interpreter, which turns it into "RuntimeError: The following operation failed in the
TorchScript interpreter", so checkpoint cannot catch it and backward fails. A plain Python ``forward``
fails the same way wherever it calls a compiled child (``child``, ``several children``, nested
subclasses, a ``torch.jit.script``-ed child); exploring every model shape found that. Without early
stop (``set_checkpoint_early_stop(False)``) it still fails on the first checkpointed call of a freshly
compiled script_method forward with eager ops around its child (``child first``, ``child between``,
``several children``) or with buffers only, and works once that class's forward has run before
(measured: a second call on the same class matches; the profiling executor's first run differs from
its recomputation, a likely cause not proven). That order dependence is why the case without early
stop is not in its scope: the oracle's later instances reuse warmed classes. With early stop, where
the compiled code has finished before the recomputation stops (a compiled child, then an eager
layer), that first call fails instead with torch's own CheckpointError (recomputed tensors of other
metadata, or more of them): generated models found it (``python -m repro --explore``), and this bug
takes it, in the same reach. With a plain forward,
the shape ``child between`` (tanh around the child call) works. No upstream report was found
(related: pytorch/pytorch#54612, exceptions in the interpreter become RuntimeError).
It lives in ``torch/utils/checkpoint.py``, which the tracker's wheel probe does not read: there is no
static signature, and the tracker confirms it dynamically only.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from repro.catalogue import edits
from repro.catalogue.bug import IN_EAGER_PARENT, NESTED, ROOTS, raised, scope
from repro.catalogue.declare import declare
from repro.catalogue.texts import inserted
from repro.source_checks import find
from repro.traits import Traits

if TYPE_CHECKING:  # the engine imports torch; the tracker reads signatures without it
    from repro.engine.oracle import ScenarioResult

SIGNATURE = "The following operation failed in the TorchScript interpreter"
# torch's own checks, where the compiled code's first run saved other tensors than its recomputation
PROFILED = (
    "Recomputed values for the following tensors have different metadata",
    "trying to save more tensors during recomputation",
)
EARLY_STOP = "non-reentrant, with early stop: same gradients"


@contextmanager
def early_stop_and_optimization_off() -> Iterator[None]:
    """``Workaround.apply``: torch's own two switches, around the forward and the backward. Without
    early stop the stop's exception is never raised; without the executor's optimization the
    recomputation runs the graph the forward ran (a freshly compiled forward's first run is profiled
    and the recomputation, its second, would run the optimized graph, which saves other tensors)."""
    import torch
    from torch.utils.checkpoint import set_checkpoint_early_stop  # imports torch: only when a proof runs

    with set_checkpoint_early_stop(False), torch.jit.optimized_execution(False):
        yield


def root_cause(evidence: list[str]) -> list[str]:
    from repro.catalogue.measure import INTERPRETER_ERROR, first_line, line_of, subclass

    checkpoint_py = "torch/utils/checkpoint.py"
    import torch
    from torch.utils.checkpoint import checkpoint

    try:
        checkpoint(subclass(), torch.ones(1, 2, requires_grad=True), use_reentrant=False).sum().backward()
        seen = "ran without an error here"
    except RuntimeError as err:
        seen = f"raised {first_line(err).rstrip('.')}"
    return [
        "In backward, non-reentrant checkpoint recomputes the forward and, with early stop (the default), "
        f"raises _StopRecomputationError from a saved-tensor hook once it has what it needs "
        f"({line_of(checkpoint_py, 'raise _StopRecomputationError')}).",
        f"That hook fires inside the compiled forward, and {INTERPRETER_ERROR}.",
        "checkpoint catches only _StopRecomputationError "
        f"({line_of(checkpoint_py, 'except _StopRecomputationError')}), so backward fails: measured, it {seen}.",
    ]


def recognise(result: ScenarioResult) -> bool:
    return "torch.utils.checkpoint.checkpoint" in result.scenario.apis and raised(result, SIGNATURE, *PROFILED)


# --- fixing it: checkpoint takes an exception that reaches it once every tensor was recomputed under
# early stop as the stop it was (TorchScript's interpreter raised it again as RuntimeError), and then
# recomputes the whole forward without early stop, so that the usual count and metadata checks apply.
# Taking that exception as the stop alone was measured to give silently wrong input gradients: the
# first checkpointed call of a freshly compiled forward is the profiling executor's first run, and its
# recomputation runs the optimized graph, which saves more tensors. That is C++, and stays: the patch
# makes it a CheckpointError that says so ("loud").

CHECKPOINT = "torch/utils/checkpoint.py"
REFUSAL = "saved more tensors than its first run did"


def _stop_handler(tree: ast.Module) -> ast.excepthandler | None:
    """``except _StopRecomputationError`` in ``_checkpoint_hook``'s unpack hook."""
    hook = find(tree, ast.ClassDef, "_checkpoint_hook")
    return next(
        (
            handler
            for handler in (ast.walk(hook) if hook else ())
            if isinstance(handler, ast.ExceptHandler)
            and handler.type is not None
            and ast.unparse(handler.type) == "_StopRecomputationError"
        ),
        None,
    )


recompute_when_the_stop_was_translated = edits.Insertion(  # a handler after the early stop's own
    CHECKPOINT,
    _stop_handler,
    edits.Where.AFTER,
    ("except Exception:", *(f"    {line}" for line in inserted(__name__, "recompute_without_early_stop"))),
    missing=f"{CHECKPOINT}: _checkpoint_hook no longer catches _StopRecomputationError.",
    marker="frame.early_stop = False",
    already="already recomputes without early stop",
)

CASES = (EARLY_STOP,)
SCOPE = (
    scope(ROOTS + IN_EAGER_PARENT, ("script_method",), EARLY_STOP)
    + scope(
        ("child", "child first", "child last", "several children", "in eager parent, with child", *NESTED),
        ("plain_forward",),
        EARLY_STOP,
    )
    + scope(("scripted child",), ("torch.jit.script",), EARLY_STOP)
)


def reach(t: Traits) -> bool:
    """Any model where some forward runs compiled."""
    return t.compiled


BUG = declare(__name__)
