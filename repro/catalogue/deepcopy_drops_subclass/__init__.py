"""``copy.deepcopy`` of a ScriptModule subclass returns a bare ``RecursiveScriptModule``.

``copy.deepcopy`` looks ``__deepcopy__`` up on the instance (``copy.copy`` looks on the class, and
works). ``ScriptModule`` defines none, so its ``__getattr__`` forwards the lookup to the inner
``RecursiveScriptModule``, whose ``__deepcopy__`` wraps a copy of the C++ module alone: the copy is
no longer the user's class, has none of the wrapper's hooks (registered hooks silently stop running)
and, where ``forward`` is a plain Python method, no ``forward`` at all; with a script_method forward,
backward through the copy leaves the copy's parameters without gradients (measured on every shape
with parameters). Related upstream: pytorch/pytorch#18106 (``copy.copy`` of a ScriptModule, 2019),
#44951 (deepcopy of a traced module); no report of the lost class and hooks was found.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from repro.catalogue import edits
from repro.catalogue.bug import IN_EAGER_PARENT, ROOTS, raised_instead, routed, scope
from repro.catalogue.declare import declare
from repro.catalogue.fixes import Candidate
from repro.catalogue.shared import deepcopy_wraps_cpp_copy
from repro.catalogue.texts import inserted
from repro.source_checks import SCRIPT_PY, Trees, method
from repro.traits import Traits
from repro.vocabulary import Verdict

if TYPE_CHECKING:  # the engine imports torch; the tracker reads signatures without it
    from repro.engine.oracle import ScenarioResult

APIS = ("copy.deepcopy",)
CLASS = "the copy's class"
CHILDREN = "the copy's children of another class"  # a subclass child's copy (in an eager parent)


def recognise(result: ScenarioResult) -> bool:
    """The copy, or a child of it, is another class (a RecursiveScriptModule), or has no Python
    ``forward`` to run."""
    if not result.scenario.apis & set(APIS):
        return False
    if raised_instead(result, "'RecursiveScriptModule' object has no attribute"):
        return True
    sides = [side.observation if side else {} for side in (result.scripted, result.eager)]
    changed = any(sides[0].get(fact) != sides[1].get(fact) for fact in (CLASS, CHILDREN))
    return result.verdict == Verdict.DIFFERS and changed


def _no_copy_of_its_own(trees: Trees) -> tuple[bool, str]:
    own = [name for name in ("__deepcopy__", "__copy__") if method(trees[SCRIPT_PY], "ScriptModule", name)]
    if own:
        return False, f"{SCRIPT_PY}: ScriptModule now defines {', '.join(own)}"
    getattr_ = method(trees[SCRIPT_PY], "ScriptModule", "__getattr__")
    where = f"{SCRIPT_PY}:{getattr_.lineno}" if getattr_ else SCRIPT_PY
    return True, f"{where}: ScriptModule has no __deepcopy__; __getattr__ forwards it to the inner module"


def root_cause(evidence: list[str]) -> list[str]:
    import copy
    import inspect

    from repro.catalogue.measure import subclass

    lines, start = inspect.getsourcelines(copy.deepcopy)
    looks = next((start + n for n, line in enumerate(lines) if "__deepcopy__" in line), start)
    model = subclass()
    return [
        f"copy.deepcopy looks __deepcopy__ up on the object (copy.py:{looks}, Python's standard library); "
        "copy.copy looks on the class, and works.",
        f"{evidence[0]}.",
        f"{evidence[1]}: measured, copy.deepcopy(model) is a {type(copy.deepcopy(model)).__name__}, not the "
        f"user's {type(model).__name__}, without the wrapper's hooks or a Python forward.",
    ]


# --- fixing it: ScriptModule gets the __deepcopy__ copy.deepcopy finds on the instance (what the workaround
# declares on the class): the wrapper's attributes deep-copied as nn.Module's are, the compiled module by
# its own __deepcopy__.

add_deepcopy = edits.MethodAddition(
    SCRIPT_PY, "ScriptModule", "__setattr__", inserted(__name__, "ScriptModule.__deepcopy__")
)

# an eager parent's deep copy copies its subclass child so (measured where the scenario runs on one)
SCOPE = scope(ROOTS) + scope(IN_EAGER_PARENT, case="backward through the copy fills the copy's gradients")


def reach(t: Traits) -> bool:
    """A ScriptModule subclass anywhere: an eager parent's deep copy copies a subclass child so too."""
    return t.subclass


PIECES = (_no_copy_of_its_own, deepcopy_wraps_cpp_copy)
FINGERPRINTED = ((SCRIPT_PY, "ScriptModule.__getattr__"), (SCRIPT_PY, "RecursiveScriptModule.__deepcopy__"))
# the call on any model, not the class attribute alone: a subclass inside a torch.jit.script-ed model is
# copied by torch's own RecursiveScriptModule.__deepcopy__, which no attribute of the user's class reaches
# (the class attribute too: code that bound copy's deepcopy before, as a scenario module does, reaches it)
apply_workaround = routed("__deepcopy__", "copy.deepcopy")
CANDIDATES = (
    Candidate(
        "workaround",
        "user",
        "__deepcopy__ = repro.workaround.deepcopy in the class body",
        apply=routed("__deepcopy__"),
    ),
)

BUG = declare(__name__)
