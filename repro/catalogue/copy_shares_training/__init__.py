"""``copy.copy`` of a ScriptModule subclass shares its training mode with the original.

``copy.copy`` of an ``nn.Module`` copies the instance's ``__dict__``: ``training`` is a plain attribute
of each copy, so ``copy.eval()`` leaves the original in training mode (the children, shared, do
follow). A ScriptModule subclass keeps ``training`` in the compiled module (``ScriptModule.__setattr__``
forwards it, the mechanism of ``full-backward-hook-flag``), and the shallow copy shares that module:
``eval()`` on the copy switches the original to eval mode too, so dropout and batch norm in the
original silently stop training. Related upstream: pytorch/pytorch#18106 ("copy.copy not working for
ScriptModule", open); no report of the shared training mode was found.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from repro.catalogue import edits
from repro.catalogue.bug import ROOTS, routed, scope
from repro.catalogue.declare import declare
from repro.catalogue.fixes import Candidate, Sources
from repro.source_checks import SCRIPT_PY
from repro.traits import PLAIN_FORWARD, SCRIPT_METHOD, Traits
from repro.vocabulary import Verdict

if TYPE_CHECKING:  # the engine imports torch; the tracker reads signatures without it
    from repro.engine.oracle import ScenarioResult

MODE = "original training"


def root_cause(evidence: list[str]) -> list[str]:
    import copy

    from repro.catalogue.measure import line_of, subclass

    model = subclass()
    duplicate = copy.copy(model)
    shared = duplicate.__dict__["_actual_script_module"] is model.__dict__["_actual_script_module"]
    duplicate.eval()
    return [
        "copy.copy of a ScriptModule subclass copies the wrapper's __dict__ (the class defines no __copy__): "
        f"measured, the copy {'shares' if shared else 'does not share'} the original's compiled module.",
        "training lives in the compiled module: ScriptModule.__setattr__ forwards it there "
        f"({line_of('torch/jit/_script.py', 'def __setattr__', after='class ScriptModule')}).",
        f"So eval() on the copy sets it for both: measured, the original's training is then {model.training}.",
    ]


def recognise(result: ScenarioResult) -> bool:
    """After ``eval()`` on the copy, the original is in eval mode where eager's stays in training."""
    scripted, eager = (side.observation.get(MODE) if side else None for side in (result.scripted, result.eager))
    return (
        result.verdict == Verdict.DIFFERS
        and "copy.copy" in result.scenario.apis
        and scripted is False
        and eager is True
    )


# --- fixing it: ScriptModule gets a __copy__ (what the workaround declares on the class, in torch's own
# terms): the copy shares the wrapper's attributes, the compiled module included, as a shallow copy of an
# nn.Module shares _parameters; its training mode is kept on the copy, which __setattr__ honours and which
# __call__ puts on the compiled module for the length of each call.

OWN = "_training_of_a_copy"
COPY = [
    "def __copy__(self):",
    '    """A shallow copy, as an nn.Module copy is: everything shared (the compiled',
    "    module included, so a parameter re-assigned on either is both's) but the",
    '    training mode, which is the copy\'s own."""',
    "    clone = type(self).__new__(type(self))",
    "    clone.__dict__.update(self.__dict__)",
    '    if "_actual_script_module" in self.__dict__:',
    f'        clone.__dict__["{OWN}"] = self.training',
    "    return clone",
    "",
    "def __call__(self, *args, **kwargs):",
    f'    if "{OWN}" not in self.__dict__:',
    "        return super().__call__(*args, **kwargs)",
    "    # a copy: the compiled module, shared, runs in the copy's mode",
    '    compiled = self.__dict__["_actual_script_module"]',
    "    before = compiled.training",
    f'    compiled.training = self.__dict__["{OWN}"]',
    "    try:",
    "        return super().__call__(*args, **kwargs)",
    "    finally:",
    "        compiled.training = before",
]
OWN_TRAINING = [
    f'if attr == "training" and "{OWN}" in self.__dict__:',
    f'    self.__dict__["{OWN}"] = value  # a copy\'s mode is its own (__copy__)',
    "    return",
]


def add_copy(sources: Sources) -> dict[str, str]:
    """``ScriptModule.__copy__`` and ``__call__``, beside its ``__setattr__``, which keeps a copy's
    ``training`` on the copy; the copy reads it back through ``__getattr__`` (``training``, below)."""
    text = edits.add_method(edits.source(sources, SCRIPT_PY), SCRIPT_PY, "ScriptModule", "__setattr__", COPY)
    setattr_ = edits.required(
        _script_module_method(edits.parse(SCRIPT_PY, text), "__setattr__"),
        f"{SCRIPT_PY}: ScriptModule no longer defines __setattr__.",
    )
    text = edits.insert(text, edits.body_start(setattr_), OWN_TRAINING, edits.indent_of(text, setattr_.body[0].lineno))
    getattr_ = edits.required(
        _script_module_method(edits.parse(SCRIPT_PY, text), "__getattr__"),
        f"{SCRIPT_PY}: ScriptModule no longer defines __getattr__.",
    )
    read = [f'if attr == "training" and "{OWN}" in self.__dict__:', f'    return self.__dict__["{OWN}"]']
    return {
        SCRIPT_PY: edits.insert(text, edits.body_start(getattr_), read, edits.indent_of(text, getattr_.body[0].lineno))
    }


def _script_module_method(tree: ast.AST, name: str) -> ast.FunctionDef | None:
    """``name`` of the ``ScriptModule`` class that defines ``__copy__`` (the patched one, not the stub
    torch defines when TorchScript is disabled)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "ScriptModule":
            defined = {f.name: f for f in node.body if isinstance(f, ast.FunctionDef)}
            if "__copy__" in defined and name in defined:
                return defined[name]
    return None


SCOPE = scope(ROOTS)


def reach(t: Traits) -> bool:
    """The subclass is the module copied."""
    return t.root in (SCRIPT_METHOD, PLAIN_FORWARD)


apply_workaround = routed("__copy__")
CANDIDATES = (
    Candidate(
        "workaround",
        "user",
        "__copy__ = repro.workaround.shallow_copy in the class body",
        apply=routed("__copy__"),
    ),
)

BUG = declare(__name__)
