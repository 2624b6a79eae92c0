"""``Module.compile()`` on a ScriptModule subclass silently compiles nothing.

``Module.compile`` assigns ``self._compiled_call_impl = torch.compile(self._call_impl, ...)``.
``ScriptModule.__setattr__`` forwards that assignment to the inner ``RecursiveScriptModule``
(the mechanism of ``full-backward-hook-flag``), so the wrapper, whose ``__call__`` reads the
attribute, keeps reading None: no error, and later calls never go through ``torch.compile``.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from repro.catalogue import edits
from repro.catalogue.bug import ROOTS, calls, scope
from repro.catalogue.declare import declare
from repro.catalogue.texts import inserted
from repro.source_checks import MODULE_PY, SCRIPT_PY, Trees, assigns, method, setattr_forwards
from repro.traits import PLAIN_FORWARD, SCRIPT_METHOD, Traits
from repro.vocabulary import Verdict

if TYPE_CHECKING:  # the engine imports torch; the tracker reads signatures without it
    from repro.engine.oracle import ScenarioResult

ATTRIBUTE = "_compiled_call_impl"
MARK = ["torch.compile backend"]


def recognise(result: ScenarioResult) -> bool:
    return result.verdict == Verdict.DIFFERS and MARK in calls(result.eager) and MARK not in calls(result.scripted)


def applies(trees: Trees) -> str | None:
    if method(trees[MODULE_PY], "Module", "compile") is None:
        return f"{MODULE_PY}: Module.compile not found (added in torch 2.2)"
    return None


def _compile_assigns(trees: Trees) -> tuple[bool, str]:
    compile_method = method(trees[MODULE_PY], "Module", "compile")
    if compile_method is None:
        return False, f"{MODULE_PY}: Module.compile not found"
    for node in ast.walk(compile_method):
        if assigns(node, lambda t: isinstance(t, ast.Attribute) and t.attr == ATTRIBUTE):
            return True, f"{MODULE_PY}:{node.lineno}: Module.compile assigns self.{ATTRIBUTE} = ..."
    return False, f"{MODULE_PY}:{compile_method.lineno}: Module.compile no longer assigns self.{ATTRIBUTE}"


def root_cause(evidence: list[str]) -> list[str]:
    from repro.catalogue.measure import line_of, subclass

    model = subclass()
    model._compiled_call_impl = print  # what Module.compile assigns, without loading dynamo
    wrapper, inner = model.__dict__.get(ATTRIBUTE), model._actual_script_module.__dict__.get(ATTRIBUTE)
    return [
        f"Module.compile assigns torch.compile's result to self.{ATTRIBUTE} ({evidence[0]}).",
        f"ScriptModule.__setattr__ forwards the assignment to the inner RecursiveScriptModule ({evidence[1]}); "
        f"measured, after assigning, the wrapper reads {wrapper!r} and the inner module holds {inner!r}.",
        f"The wrapper's __call__ reads its own {ATTRIBUTE} "
        f"({line_of(MODULE_PY, 'if self._compiled_call_impl is not None', after='def _wrapped_call_impl')}): "
        "None, so every call runs uncompiled, without an error.",
    ]


# --- fixing it: dynamo cannot trace a ScriptModule, with either forward style (measured: storing
# torch.compile(model._call_impl) on the wrapper, as Module.compile would, captures 0 graphs), so no Python
# change makes Module.compile work; the patch gives ScriptModule a compile that refuses instead (loud).

REFUSAL = "Module.compile() cannot compile a ScriptModule"
add_compile = edits.MethodAddition(SCRIPT_PY, "ScriptModule", "__setattr__", inserted(__name__, "ScriptModule.compile"))

SCOPE = scope(tuple(shape for shape in ROOTS if shape != "raising"))


def reach(t: Traits) -> bool:
    """The subclass is the module compiled."""
    return t.root in (SCRIPT_METHOD, PLAIN_FORWARD)


PIECES = (_compile_assigns, setattr_forwards(ATTRIBUTE))
FINGERPRINTED = ((MODULE_PY, "Module.compile"), (SCRIPT_PY, "ScriptModule.__setattr__"))

BUG = declare(__name__)
