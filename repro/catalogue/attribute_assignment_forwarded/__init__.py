"""Assigning attributes of a ScriptModule subclass goes to the compiled module, typed at construction.

``ScriptModule.__setattr__`` forwards every assignment after ``__init__`` to the inner
``RecursiveScriptModule`` (the mechanism of ``full-backward-hook-flag``), whose attributes have the
types scripting gave them. So ``model.weight = None`` (which ``nn.Module`` allows, to drop a
parameter) raises "Could not cast attribute 'weight' to type Tensor", a plain tensor assigned to a
parameter is silently accepted (``nn.Module`` raises ``TypeError``), ``model.training = 0`` is stored
as ``False``, and a plain attribute set after ``__init__`` cannot be deleted again (it went to the
inner module; ``del`` looks on the wrapper). No upstream report was found.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from repro.catalogue import edits
from repro.catalogue.bug import ROOTS, raised, scope
from repro.catalogue.declare import declare
from repro.catalogue.fixes import PatchError, Sources
from repro.catalogue.texts import inserted
from repro.source_checks import SCRIPT_PY, forwarding_call, setattr_forwards
from repro.traits import Traits
from repro.vocabulary import Verdict

if TYPE_CHECKING:  # the engine imports torch; the tracker reads signatures without it
    from repro.engine.oracle import ScenarioResult

APIS = ("setattr", "delattr")


def recognise(result: ScenarioResult) -> bool:
    """In an assignment or deletion: the cast error, an attribute that cannot be deleted, or a value
    kept otherwise than eager keeps it."""
    return bool(result.scenario.apis & set(APIS)) and (
        raised(result, "Could not cast attribute", "object has no attribute") or result.verdict == Verdict.DIFFERS
    )


def root_cause(evidence: list[str]) -> list[str]:
    from repro.catalogue.measure import SETATTR_CAST, subclass

    model = subclass(script_method=False)
    types = {name: str(kind) for name, (kind, _) in model._actual_script_module._concrete_type.get_attributes().items()}
    shown = ", ".join(f"{name}: {types[name]}" for name in ("training",) if name in types)
    return [
        f"After __init__, ScriptModule.__setattr__ forwards every assignment to the inner module ({evidence[0]}).",
        f"Scripting gave each attribute a TorchScript type: measured, {shown or 'training is not an attribute'}; "
        "parameters and buffers are Tensor.",
        f"Then {SETATTR_CAST}: None is no Tensor, 0 becomes False, a plain tensor is a Tensor too.",
        "A plain attribute assigned after __init__ went to the inner module as well, so del looks on the "
        "wrapper and finds nothing.",
    ]


# --- fixing it: the compiled module's attributes are typed by TorchScript in C++, so a None or an int cannot
# be stored where eager stores them; the patch makes ScriptModule.__setattr__ refuse those in words that say
# why (loud), refuse a plain tensor on a parameter as nn.Module does (TypeError), and gives the wrapper a
# __delattr__ that deletes what its __setattr__ forwarded.

REFUSAL = "its compiled type holds"
CHECKS = list(inserted(__name__, "check_assignments"))
DELATTR = list(inserted(__name__, "ScriptModule.__delattr__"))


def check_assignments(sources: Sources) -> dict[str, str]:
    """Checks before ``ScriptModule.__setattr__`` forwards, and a ``__delattr__`` beside it."""
    text, tree = edits.opened(sources, SCRIPT_PY)
    setattr_method, call = forwarding_call(tree)
    if setattr_method is None or call is None:
        raise PatchError(f"{SCRIPT_PY}: ScriptModule.__setattr__ does not forward to _actual_script_module.")
    edits.unpatched(SCRIPT_PY, text, REFUSAL, "already checks assignments in ScriptModule.__setattr__")
    text = edits.insert(text, call.lineno, CHECKS, edits.indent_of(text, call.lineno))
    return {SCRIPT_PY: edits.add_method(text, SCRIPT_PY, "ScriptModule", "__setattr__", DELATTR)}


SCOPE = scope(ROOTS)


def reach(t: Traits) -> bool:
    """Any ScriptModule in the model: a torch.jit.script-ed module's __setattr__ forwards too."""
    return t.subclass or t.compiled


PIECES = (setattr_forwards("training"),)
FINGERPRINTED = ((SCRIPT_PY, "ScriptModule.__setattr__"),)

BUG = declare(__name__)
