"""Global module hooks skip every module that a compiled forward calls.

Eager ``Module._call_impl`` runs the global hooks (``register_module_forward_hook`` and friends)
for every module it calls: the model and each child. A compiled ``script_method`` forward calls
its children inside TorchScript, never through ``Module.__call__``, so only the root's Python
call runs them: hooks on children are silently skipped. The same holds with a plain ``forward``
whose child is itself a ScriptModule subclass with a compiled forward (the shapes ``two deep`` and
``three deep``): that child's own children are skipped. Found by exploring the bug over every model
shape; first seen on a script_method forward with one child. Related upstream: PR #38972 (its
author noted that global hooks never run for the internal modules of a jitted module).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from repro.catalogue import edits
from repro.catalogue.bug import NESTED, WITH_CHILDREN, fewer_calls, scope
from repro.catalogue.declare import declare
from repro.catalogue.shared import call_impl_runs_global_hooks, script_method_compiles
from repro.catalogue.texts import inserted
from repro.source_checks import MODULE_PY, SCRIPT_PY, Trees, find, method
from repro.traits import Traits

if TYPE_CHECKING:  # the engine imports torch; the tracker reads signatures without it
    from repro.engine.oracle import ScenarioResult

GLOBAL_APIS = (
    "register_module_forward_pre_hook",
    "register_module_forward_hook",
    "register_module_full_backward_pre_hook",
    "register_module_full_backward_hook",
    "register_module_backward_hook",
)


def recognise(result: ScenarioResult) -> bool:
    """Global hooks ran for only some of the modules eager runs them for, in eager's order: those a
    compiled forward calls are skipped (the root's under a script_method forward; a nested subclass's
    children under a plain one)."""
    return bool(result.scenario.apis & set(GLOBAL_APIS)) and fewer_calls(result)


def applies(trees: Trees) -> str | None:
    if find(trees[MODULE_PY], ast.FunctionDef, "register_module_forward_hook") is None:
        return f"{MODULE_PY}: register_module_forward_hook not found"
    return None


def root_cause(evidence: list[str]) -> list[str]:
    from repro.catalogue.measure import CALL_METHOD, calls_children_in_torchscript, subclass

    inside = calls_children_in_torchscript(subclass(script_method=True))
    return [
        f"Module._call_impl runs the global module hooks for each module called through Python ({evidence[0]}).",
        f"@torch.jit.script_method compiles forward ({evidence[1]}); measured, the compiled forward "
        f"{'calls' if inside else 'does not call'} its child with prim::CallMethod, inside TorchScript.",
        f"There {CALL_METHOD}: the global hooks run for the model, called from Python, and never for its children.",
    ]


# --- fixing it: a compiled forward calls its children inside TorchScript (C++), where Module._call_impl never
# runs, so no Python change makes global hooks reach them; the patch makes _call_impl refuse, while global
# hooks are registered, to call a ScriptModule whose compiled forward would skip its children (loud).

REFUSAL = "global module hooks would skip the children of this"


def _fast_path(tree: ast.Module) -> ast.stmt | None:
    """``Module._call_impl``'s return when no hook of any kind is registered."""
    call_impl = method(tree, "Module", "_call_impl")
    return (
        edits.statement(
            call_impl,
            lambda node: (
                isinstance(node, ast.If)
                and isinstance(node.body[0], ast.Return)
                and "_global_forward_hooks" in ast.unparse(node.test)
            ),
        )
        if call_impl
        else None
    )


refuse_calls_that_skip_children = edits.Insertion(  # Module._call_impl, once past its fast path
    MODULE_PY,
    _fast_path,
    edits.Where.AFTER,
    inserted(__name__, "refuse_calls_that_skip_children"),
    missing=f"{MODULE_PY}: Module._call_impl has no no-hooks fast path to follow.",
    marker=REFUSAL,
    already="already refuses calls that global hooks would not follow",
)

SCOPE = scope((*WITH_CHILDREN, "in eager parent, with child", *NESTED), ("script_method",)) + scope(
    ("two deep", "three deep"), ("plain_forward",)
)


def reach(t: Traits) -> bool:
    """A module that a compiled forward calls: Python never calls it."""
    return t.inside_torchscript


PIECES = (call_impl_runs_global_hooks, script_method_compiles)
FINGERPRINTED = ((MODULE_PY, "Module._call_impl"), (SCRIPT_PY, "script_method"))

BUG = declare(__name__)
