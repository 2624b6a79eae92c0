"""``quantize_dynamic`` quantizes nothing of a ScriptModule subclass.

``torch.ao.quantization.quantize_dynamic(model, {nn.Linear})`` deep-copies the model, then swaps
each child whose type is in the given set for its dynamically quantized version. A ScriptModule
subclass's children are ``RecursiveScriptModule``s (TorchScript compiles them, by design), so no
child matches: with a ``script_method`` forward it returns an unquantized model without a word,
and the caller ships float weights it believes are int8. With a plain forward the deep copy drops
the Python ``forward`` (``deepcopy-drops-subclass``) and the result cannot be called. Where the copy
keeps the subclass (``inplace=True``, or a torch whose deep copy keeps it: measured under that bug's
upstream patch), ``quantize_dynamic`` raises ``AttributeError: ... no attribute 'qconfig'``: the
subclass's ``__setattr__`` sent ``qconfig`` to the compiled module, where ``_remove_qconfig``'s ``del``
cannot reach it. Eager-mode quantization documents eager modules only; TorchScript has its own
``quantize_dynamic_jit``.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from repro.catalogue import edits
from repro.catalogue.bug import WITH_CHILDREN, raised, scope
from repro.catalogue.declare import declare
from repro.catalogue.texts import inserted
from repro.source_checks import find
from repro.traits import PLAIN_FORWARD, Traits
from repro.vocabulary import Verdict

if TYPE_CHECKING:  # the engine imports torch; the tracker reads signatures without it
    from repro.engine.oracle import ScenarioResult

QUANTIZED = "first call: its child quantized"
# where the copy keeps the subclass (inplace=True, or deepcopy-drops-subclass fixed): quantize_dynamic's
# _remove_qconfig cannot delete what the subclass's __setattr__ sent to the compiled module
ERRORS = ("object has no attribute 'qconfig'",)


def root_cause(evidence: list[str]) -> list[str]:
    import torch

    from repro.catalogue.measure import line_of, subclass

    model = subclass()
    try:
        quantized = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
        outcome = (
            f"Measured, the result's child is a {type(quantized.child).__name__}; with a plain forward, the "
            "deep copy quantize_dynamic makes first has no forward (deepcopy-drops-subclass)."
        )
    except AttributeError as err:  # the copy kept the subclass (a torch whose deepcopy keeps it)
        outcome = (
            f"Measured, quantize_dynamic raised AttributeError: {err}: its copy kept the subclass, whose "
            "__setattr__ sent qconfig to the compiled module, out of reach of _remove_qconfig's del "
            f"({line_of(QUANTIZE, 'del module.qconfig')})."
        )
    return [
        "quantize_dynamic swaps a child only when its type is a key of the mapping it was given "
        f"({line_of(QUANTIZE, 'def swap_module')}).",
        f"A ScriptModule subclass's children are RecursiveScriptModules: measured, {type(model.child).__name__}, "
        "never nn.Linear, so nothing is swapped and nothing is said.",
        outcome,
    ]


def recognise(result: ScenarioResult) -> bool:
    """The result is not quantized where eager's is, or the deep copy it made cannot be called."""
    if "torch.ao.quantization.quantize_dynamic" not in result.scenario.apis:
        return False
    scripted = result.scripted.observation.get(QUANTIZED) if result.scripted else None
    eager = result.eager.observation.get(QUANTIZED) if result.eager else None
    silent = result.verdict == Verdict.DIFFERS and scripted is False and eager is True
    return silent or raised(result, "object has no attribute 'forward'", *ERRORS)


# --- fixing it: eager-mode quantization swaps child modules by their Python class, and a ScriptModule's
# children are TorchScript's; no change to the swap makes it quantize compiled code, so the patch refuses
# a model that is or holds a ScriptModule, naming TorchScript's own quantize_dynamic_jit (loud).

QUANTIZE = "torch/ao/quantization/quantize.py"
REFUSAL = "quantize_dynamic quantizes eager modules only"
refuse_script_modules = edits.Insertion(  # quantize_dynamic refuses TorchScript first
    QUANTIZE,
    lambda tree: find(tree, ast.FunctionDef, "quantize_dynamic"),
    edits.Where.AT_START,
    inserted(__name__, "refuse_script_modules"),
    missing=f"{QUANTIZE} has no function quantize_dynamic.",
    marker=REFUSAL,
    already="already refuses TorchScript in quantize_dynamic",
)

SCOPE = scope(WITH_CHILDREN)


def reach(t: Traits) -> bool:
    """An nn.Linear held by a ScriptModule; a plain forward's deep copy cannot be called at all."""
    return t.linear_in_script_module or t.root == PLAIN_FORWARD


BUG = declare(__name__)
