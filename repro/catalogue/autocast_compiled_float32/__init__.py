"""Under ``torch.autocast``, a ``script_method`` forward's own ops after a child come out float32.

TorchScript runs its own autocast pass over a compiled graph (JIT autocast, on by default), with a
cast policy of its own: in a ``script_method`` forward that calls an ``nn.Linear`` child and then
computes on its output (``linear(x) * 2 + 1``), eager's output under ``torch.autocast("cpu",
torch.bfloat16)`` is bfloat16 and the compiled forward's is float32, on the first call and every
later one. A forward that ends with the child (``linear(x * 2 - 1)``) is bfloat16 in both. With JIT
autocast switched off (``torch._C._jit_set_autocast_mode(False)``) the compiled forward follows the
eager autocast state and matches; a plain Python forward matches too. The cause is C++
(torch/csrc/jit/passes/autocast.cpp), which wheels do not ship as source.

Training shows a second face of it (found 2026-12-05 by the scenario that runs backward after an
autocast forward): on ``child between`` (``tanh(linear(x * 0.5)) + 1``) the gradients of the input
and of the child's parameters differ from eager's in the last bfloat16 digit from the second call
on, when TorchScript runs its optimized graph and that graph's own backward, with JIT autocast on or
off. The dtypes agree; only values differ. Switching JIT autocast off makes training worse, not
better: the backward of ``child first`` and ``child between`` then raises "expected m1 and m2 to
have the same dtype" (measured by that switch's proof, tests/catalogue/test_workaround_verdicts.py);
a plain ``forward`` matches eager in both scenarios on every call. The switch's failure is
order-dependent: a process that trained such a model with JIT autocast on before (its child's
compiled forward then optimized with it on) trains later ones with it off.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from repro.catalogue import edits
from repro.catalogue.bug import scope
from repro.catalogue.declare import declare
from repro.catalogue.texts import inserted
from repro.traits import Traits
from repro.vocabulary import Verdict

if TYPE_CHECKING:  # the engine imports torch; the tracker reads signatures without it
    from repro.engine.oracle import ScenarioResult

PASS = (
    "torch/csrc/jit/passes/autocast.cpp at upstream commit 000a882b71406fc0bb39f78b0373518e22d2341b "
    "(castInputsToWidestType)"
)
CASE = "autocast to bfloat16 on CPU: output dtype and values"
TRAINING = "training under autocast to bfloat16 on CPU: gradients and their dtypes"
OUTPUT = "first call: output"


def root_cause(evidence: list[str]) -> list[str]:
    import torch

    from repro.catalogue.measure import line_of

    def dtype_under_autocast(jit_autocast: bool) -> str:
        class Net(torch.jit.ScriptModule):  # a new class each time: a compiled graph keeps its passes
            def __init__(self) -> None:
                super().__init__()
                self.linear = torch.nn.Linear(2, 2)

            @torch.jit.script_method
            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return self.linear(x) * 2.0 + 1.0

        before = torch._C._jit_set_autocast_mode(jit_autocast)
        try:
            with torch.autocast("cpu", dtype=torch.bfloat16):
                return str(Net()(torch.ones(1, 2)).dtype)
        finally:
            torch._C._jit_set_autocast_mode(before)

    return [
        "A script_method forward is compiled by TorchScript "
        f"({line_of('torch/jit/_script.py', 'def script_method')}), and its graph runs TorchScript's passes.",
        "With JIT autocast on (as it is here unless switched off), its pass casts every input of add, sub, "
        "mul and div to float32 "
        f"when one is float32 or of unknown dtype ({PASS}); eager promotes a bfloat16 tensor and a scalar "
        "to bfloat16.",
        f"Measured: the output is {dtype_under_autocast(True)} with JIT autocast on, "
        f"{dtype_under_autocast(False)} with it off (eager: torch.bfloat16).",
    ]


def recognise(result: ScenarioResult) -> bool:
    """Under autocast the compiled side's output has another dtype than eager's; in training, its
    gradients other values of the same dtypes and shapes (a generated case's calls are numbered, and
    any of them may train)."""
    if result.verdict != Verdict.DIFFERS or "torch.autocast" not in result.scenario.apis:
        return False
    if result.scenario.name == TRAINING:
        return _only_gradient_values_differ(result)
    generated = result.scenario.traits is not None
    if generated and _only_gradient_values_differ(result):
        return True
    mine = result.scripted.observation if result.scripted else {}
    theirs = result.eager.observation if result.eager else {}
    outputs = [key for key in mine if key.endswith("output")] if generated else [OUTPUT]
    return any(
        _dtype(mine.get(key)) == "torch.float32" and _dtype(theirs.get(key)) == "torch.bfloat16" for key in outputs
    )


def _dtype(recorded: object) -> object:
    return recorded.get("dtype") if isinstance(recorded, dict) else None


def _only_gradient_values_differ(result: ScenarioResult) -> bool:
    """Every observation that differs is a gradient, each tensor in it of the same dtype and shape."""
    mine = result.scripted.observation if result.scripted else {}
    theirs = result.eager.observation if result.eager else {}
    differing = [key for key in set(mine) | set(theirs) if mine.get(key) != theirs.get(key)]
    return bool(differing) and all("grad" in key and _same_tensors(mine.get(key), theirs.get(key)) for key in differing)


def _same_tensors(mine: object, theirs: object) -> bool:
    """Two recorded tensors, or mappings of them, alike but for their values (a gradient None on both
    sides, a buffer's, is alike)."""
    if mine == theirs:
        return True
    if isinstance(mine, dict) and isinstance(theirs, dict) and "dtype" not in mine:
        return mine.keys() == theirs.keys() and all(_same_tensors(mine[k], theirs[k]) for k in mine)
    if not (isinstance(mine, dict) and isinstance(theirs, dict)):
        return False
    return all(mine.get(k) == theirs.get(k) for k in ("class", "dtype", "shape"))


# --- fixing it: JIT autocast off by default. With its pass off, a compiled graph's ops dispatch
# through eager autocast, as a Python forward's do (what the workaround measures); JIT autocast's own
# tests opt in (test/test_jit_autocast.py's setUp calls torch._C._jit_set_autocast_mode(True)).

JIT_INIT = "torch/jit/__init__.py"
jit_autocast_off_by_default = edits.Insertion(  # after torch._C._jit_init() at the end of the file
    JIT_INIT,
    lambda tree: edits.statement(tree, edits.if_testing("not torch._C._jit_init()")),
    edits.Where.AFTER,
    ("", *inserted(__name__, "jit_autocast_off")),
    missing=f"{JIT_INIT} no longer calls torch._C._jit_init().",
    marker="_jit_set_autocast_mode",
    already="already sets the JIT autocast mode",
)

CASES = (CASE, TRAINING)
SCOPE = scope(("child first", "child between"), ("script_method",), CASE) + scope(
    ("child between",), ("script_method",), TRAINING
)


def reach(t: Traits) -> bool:
    """A compiled forward of two operations or more."""
    return t.compiled_ops


BUG = declare(__name__)
