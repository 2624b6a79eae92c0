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
from repro.catalogue.bug import ROOTS, Bug, Departure, Workaround, routed, scope
from repro.catalogue.fixes import TEST_JIT, Candidate, Fixes, PatchError, Sources, UpstreamPatch, regression_test
from repro.catalogue.texts import rendered
from repro.source_checks import SCRIPT_PY
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


PASTE = rendered(__name__, "paste.py")  # paste.py beside this file, as users paste it

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
    setattr_ = _script_module_method(edits.parse(SCRIPT_PY, text), "__setattr__")
    if setattr_ is None:
        raise PatchError(f"{SCRIPT_PY}: ScriptModule no longer defines __setattr__.")
    text = edits.insert(text, edits.body_start(setattr_), OWN_TRAINING, edits.indent_of(text, setattr_.body[0].lineno))
    getattr_ = _script_module_method(edits.parse(SCRIPT_PY, text), "__getattr__")
    if getattr_ is None:
        raise PatchError(f"{SCRIPT_PY}: ScriptModule no longer defines __getattr__.")
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


FIXES = Fixes(
    patch=UpstreamPatch(
        summary="ScriptModule.__copy__ shares the compiled module as nn.Module's copy shares _parameters, and keeps "
        "the copy's training mode on the copy, set on the compiled module for each of its calls",
        files=(SCRIPT_PY,),
        edit=add_copy,
        test=regression_test(__name__, "test/jit/test_script_module_copy.py", runner=TEST_JIT),
    ),
    candidates=(
        Candidate(
            "workaround",
            "user",
            "__copy__ = repro.workaround.shallow_copy in the class body",
            apply=routed("__copy__"),
        ),
    ),
)

BUG = Bug(
    id="copy-shares-training",
    number=11,
    headline="`eval()` on a `copy.copy` of the model puts the original in eval mode",
    title="copy.copy of a ScriptModule subclass shares its training mode with the original",
    upstream="not reported yet (related: pytorch/pytorch#18106)",
    apis=("copy.copy",),
    scope=scope(ROOTS),
    symptom="eval() on the copy puts the original in eval mode (eager's original stays in training)",
    departures=(
        Departure(
            "copy.copy: eval() on the copy leaves the original in training mode",
            "script_method",
            "differs",
            scripted={"hook calls": [], "original training": False, "copy training": False},
            eager={"hook calls": [], "original training": True, "copy training": False},
        ),
    ),
    recognise=recognise,
    paste_ends="AssertionError: eval() on a copy.copy of the model put the original in eval mode",
    paste=PASTE,
    explanation=__doc__,
    no_static="the shared state is the compiled C++ module: judged at run time",
    root_cause=root_cause,
    fixes=FIXES,
    workaround=Workaround(
        name="repro.workaround.shallow_copy",
        summary="__copy__ = repro.workaround.shallow_copy in the class body (or call it in place of copy.copy)",
        usage="class Net(torch.jit.ScriptModule):\n    __copy__ = repro.workaround.shallow_copy",
        apply=routed("__copy__"),
        in_torch_terms=(
            "a __copy__ on the class returning an instance of a subclass that shares the wrapper's __dict__ (the "
            "compiled module included), keeps training on itself and sets it on the compiled module for each call"
        ),
        tried=(
            "copy.deepcopy: keeps its own training mode, but returns a RecursiveScriptModule without hooks",
            "copying the compiled module shallowly (this project's workaround until 2026-12-05): a parameter "
            "re-assigned on the copy or the original then reaches only that one, silently",
        ),
    ),
    cases=("eval() on the copy leaves the original in training mode",),
)
