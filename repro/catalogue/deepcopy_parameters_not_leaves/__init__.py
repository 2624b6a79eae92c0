"""``copy.deepcopy`` of a compiled module gives the copy parameters that are not leaves.

``RecursiveScriptModule.__deepcopy__`` (what ``torch.jit.script`` returns) wraps a deep copy of the C++
module, and the C++ deep copy (``IValue::deepcopy``) copies each tensor with ``clone()``, which autograd
records: every parameter of the copy has ``grad_fn=CloneBackward0``. Backward through the copy fills
the original's gradients and leaves the copy's ``None``, with no error; an optimizer over the copy
refuses its parameters (``can't optimize a non-leaf Tensor``). Eager's deep copy
(``nn.Parameter.__deepcopy__``) makes leaves of their own. A copy of an eager model holding a
``torch.jit.script``-ed child copies the child so. A ScriptModule subclass's deep copy goes the same way
(deepcopy-drops-subclass, which answers for those runs: its patch and workaround make leaves too).
Upstream: pytorch/pytorch#44951 (open since 2020).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from repro.catalogue import edits
from repro.catalogue.bug import routed, scope
from repro.catalogue.declare import declare
from repro.catalogue.edits import Sources
from repro.catalogue.fixes import Candidate
from repro.catalogue.shared import deepcopy_wraps_cpp_copy
from repro.catalogue.texts import inserted
from repro.source_checks import SCRIPT_PY, Trees, method
from repro.traits import SCRIPTED, Traits
from repro.vocabulary import Verdict

if TYPE_CHECKING:  # the engine imports torch; the tracker reads signatures without it
    from repro.engine.oracle import ScenarioResult

APIS = ("copy.deepcopy",)
NOT_LEAVES = "copy's parameters that are not leaves"  # what the scenario and the explorer note
IVALUE_DEEPCOPY = (
    "aten/src/ATen/core/ivalue.cpp at upstream commit c90c4dc6cc42109bf644b8509598e8bceea6aa0d "
    "(IValue::deepcopy: a Tensor is copied as toTensor().clone())"
)


def recognise(result: ScenarioResult) -> bool:
    """The copy holds parameters that are not leaves, where eager's copy holds none."""
    if not result.scenario.apis & set(APIS) or result.verdict != Verdict.DIFFERS:
        return False
    scripted, eager = (side.observation.get(NOT_LEAVES) if side else None for side in (result.scripted, result.eager))
    return bool(scripted) and not eager


def _no_leaves_made(trees: Trees) -> tuple[bool, str]:
    deepcopy = method(trees[SCRIPT_PY], "RecursiveScriptModule", "__deepcopy__")
    if deepcopy is not None and any(isinstance(n, ast.Attribute) and n.attr == "is_leaf" for n in ast.walk(deepcopy)):
        return False, f"{SCRIPT_PY}:{deepcopy.lineno}: RecursiveScriptModule.__deepcopy__ now reads is_leaf"
    return True, f"{SCRIPT_PY}: RecursiveScriptModule.__deepcopy__ leaves the copied tensors as the C++ copy made them"


def root_cause(evidence: list[str]) -> list[str]:
    import copy

    import torch

    clone = copy.deepcopy(torch.jit.script(torch.nn.Linear(2, 2)))
    return [
        f"{evidence[0]}: copy.deepcopy of a torch.jit.script-ed module reaches it.",
        f"The C++ deep copy copies each tensor with clone() ({IVALUE_DEEPCOPY}), and autograd records the "
        f"clone of a tensor that requires grad: measured, the copy's weight has grad_fn "
        f"{type(clone.weight.grad_fn).__name__} and is_leaf {clone.weight.is_leaf}.",
        f"{evidence[1]}: nothing makes them leaves again, as nn.Parameter.__deepcopy__ does for eager "
        "modules (torch/nn/parameter.py), so backward through the copy reaches the original's parameters.",
    ]


# --- fixing it: the copy's parameters that came out of the C++ copy with a history, as plain tensors, become
# nn.Parameter leaves of their own (sharing between names kept), as eager's copies are.

LEAVES_MADE = inserted(__name__, "leaves")
MARKER = "the copy's parameters are leaves"  # in the inserted comment


def make_leaves(sources: Sources) -> dict[str, str]:
    """``RecursiveScriptModule.__deepcopy__``'s return replaced by the copy, its parameters made leaves
    (``nn.Parameter``s)."""
    text, tree = edits.opened(sources, SCRIPT_PY)
    edits.unpatched(SCRIPT_PY, text, MARKER, "already makes a deep copy's parameters leaves")
    deepcopy = edits.required(
        method(tree, "RecursiveScriptModule", "__deepcopy__"),
        f"{SCRIPT_PY}: RecursiveScriptModule.__deepcopy__ not found.",
    )
    returned = edits.required(
        edits.statement(deepcopy, lambda node: isinstance(node, ast.Return)),
        f"{SCRIPT_PY}: RecursiveScriptModule.__deepcopy__ has no return statement.",
    )
    return {SCRIPT_PY: edits.replaced_by(text, returned, list(LEAVES_MADE))}


SCOPE = scope(("scripted child",), (SCRIPTED,))


def reach(t: Traits) -> bool:
    """A ``torch.jit.script``-ed module anywhere in the model (a subclass's copy is deepcopy-drops-subclass's)."""
    return SCRIPTED in t.styles


PIECES = (deepcopy_wraps_cpp_copy, _no_leaves_made)
FINGERPRINTED = ((SCRIPT_PY, "RecursiveScriptModule.__deepcopy__"),)
CANDIDATES = (
    Candidate(
        "workaround",
        "user",
        "repro.workaround.deepcopy(model) in place of copy.deepcopy(model)",
        apply=routed("copy.deepcopy"),
    ),
)
apply_workaround = routed("copy.deepcopy")

BUG = declare(__name__)
