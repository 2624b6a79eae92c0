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
stop is not in its scope: the oracle's later instances reuse warmed classes. With a plain forward,
the shape ``child between`` (tanh around the child call) works. No upstream report was found
(related: pytorch/pytorch#54612, exceptions in the interpreter become RuntimeError).
It lives in ``torch/utils/checkpoint.py``, which the tracker's wheel probe does not read: there is no
static signature, and the tracker confirms it dynamically only.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from repro.catalogue.bug import (
    NESTED,
    ROOTS,
    Bug,
    Workaround,
    paste_script,
    raised,
    scope,
    scope_pairs,
)

if TYPE_CHECKING:  # the engine imports torch; the tracker reads signatures without it
    from repro.engine.oracle import ScenarioResult

SIGNATURE = "The following operation failed in the TorchScript interpreter"
EARLY_STOP = "non-reentrant, with early stop: same gradients"


def early_stop_off() -> AbstractContextManager[Any]:
    """``Workaround.apply``: torch's own switch, around the forward and the backward."""
    from torch.utils.checkpoint import set_checkpoint_early_stop  # imports torch: only when a proof runs

    return set_checkpoint_early_stop(False)


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
    return "torch.utils.checkpoint.checkpoint" in result.scenario.apis and raised(result, SIGNATURE)


PASTE = paste_script(
    "import torch\nfrom torch.utils.checkpoint import checkpoint",
    """\
x = torch.ones(1, 2, requires_grad=True)
try:
    checkpoint(Net(), x, use_reentrant=False).sum().backward()  # works on nn.Module
except RuntimeError as err:  # its message goes on with TorchScript's traceback: its first line says it
    raise AssertionError(f"backward through checkpoint raised: {str(err).splitlines()[0]}") from None
""",
)

BUG = Bug(
    id="checkpoint-early-stop",
    title="Non-reentrant torch.utils.checkpoint fails through compiled code",
    upstream="not reported yet",
    apis=("torch.utils.checkpoint.checkpoint",),
    # measured by exploring every declared shape (tests/test_scope.py)
    scope=scope(ROOTS + ("in eager parent", "in eager parent, with child"), ("script_method",), EARLY_STOP)
    + scope(
        ("child", "child first", "child last", "several children", "in eager parent, with child", *NESTED),
        ("plain_forward",),
        EARLY_STOP,
    )
    + scope(("scripted child",), ("torch.jit.script",), EARLY_STOP),
    symptom=f"RuntimeError: {SIGNATURE} (checkpoint's early stop)",
    recognise=recognise,
    script="repro/checkpoint_bug.py",
    paste=PASTE,
    explanation=__doc__,
    no_static="it lives in torch/utils/checkpoint.py, which the wheel probe does not read",
    needs=("torch.utils.checkpoint.set_checkpoint_early_stop",),
    root_cause=root_cause,
    workaround=Workaround(
        name="early stop off",
        summary="early stop off: torch.utils.checkpoint.set_checkpoint_early_stop(False) around forward and backward",
        usage="with torch.utils.checkpoint.set_checkpoint_early_stop(False):\n"
        "    checkpoint(model, x, use_reentrant=False).sum().backward()",
        apply=early_stop_off,
        in_torch_terms=("torch.utils.checkpoint.set_checkpoint_early_stop(False) around forward and backward"),
        limits=scope_pairs(
            ("child first", "child between", "child last", "several children", "buffers only"),
            ("script_method",),
        ),
        limits_why=(
            "without early stop the first checkpointed call of a freshly compiled script_method forward on these "
            "shapes still fails (measured); a plain forward works there"
        ),
    ),
    cases=(EARLY_STOP,),  # a torch without early stop cannot have it
)
