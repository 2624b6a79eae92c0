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

from typing import TYPE_CHECKING

from repro.catalogue.bug import ROOTS, Bug, Workaround, paste_script, routed, scope
from repro.catalogue.fixes import TEST_JIT, Candidate, Fixes, RegressionTest, Sources, UpstreamPatch, add_method, source
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


PASTE = paste_script(
    "import copy\n\nimport torch",
    """\
model = Net()
copy.copy(model).eval()
assert model.training, "eval() on a copy.copy of the model put the original in eval mode too"
""",
)

# --- fixing it: ScriptModule gets a __copy__ (what the workaround declares on the class): the wrapper's
# attributes shared as a shallow copy shares them, the compiled module, which holds training, copied by its
# own __copy__, so that each copy's mode is its own.

COPY = [
    "def __copy__(self):",
    '    """A shallow copy whose training mode is its own, as an nn.Module copy\'s is: the',
    '    compiled module holds ``training``, so it is copied (shallowly) rather than shared."""',
    "    clone = type(self).__new__(type(self))",
    "    clone.__dict__.update(self.__dict__)",
    '    if "_actual_script_module" in self.__dict__:',
    '        clone.__dict__["_actual_script_module"] = copy.copy(',
    '            self.__dict__["_actual_script_module"]',
    "        )",
    "    return clone",
]


def add_copy(sources: Sources) -> dict[str, str]:
    """``ScriptModule.__copy__``, beside its ``__setattr__``."""
    return {SCRIPT_PY: add_method(source(sources, SCRIPT_PY), SCRIPT_PY, "ScriptModule", "__setattr__", COPY)}


REGRESSION_TEST = """# Owner(s): ["oncall: jit"]

import copy

import torch
from torch.testing._internal.common_utils import run_tests, TestCase


class Net(torch.jit.ScriptModule):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(2, 2)

    @torch.jit.script_method
    def forward(self, x):
        return self.linear(x)


class TestScriptModuleCopy(TestCase):
    def test_copy_has_a_training_mode_of_its_own(self):
        model = Net()
        clone = copy.copy(model)
        clone.eval()
        self.assertTrue(model.training)
        self.assertFalse(clone.training)

    def test_copy_shares_parameters_as_a_shallow_copy_does(self):
        model = Net()
        clone = copy.copy(model)
        self.assertIs(type(clone), Net)
        self.assertIs(clone.linear.weight, model.linear.weight)


if __name__ == "__main__":
    run_tests()
"""

FIXES = Fixes(
    patch=UpstreamPatch(
        summary="ScriptModule.__copy__ copies the compiled module, which holds training, instead of sharing it",
        files=(SCRIPT_PY,),
        edit=add_copy,
        test=RegressionTest(
            "test/jit/test_script_module_copy.py", REGRESSION_TEST, "TestScriptModuleCopy", runner=TEST_JIT
        ),
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
    title="copy.copy of a ScriptModule subclass shares its training mode with the original",
    upstream="not reported yet (related: pytorch/pytorch#18106)",
    apis=("copy.copy",),
    scope=scope(ROOTS),
    symptom="eval() on the copy puts the original in eval mode (eager's original stays in training)",
    recognise=recognise,
    script="repro/copy_bug.py",
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
