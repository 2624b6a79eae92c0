"""Global backward hooks crash any forward through a scripted module called from Python.

With a global backward hook registered (``torch.nn.modules.module.register_module_full_backward_hook``,
``register_module_backward_hook`` or ``register_module_full_backward_pre_hook``), ``Module._call_impl``
asks every module it calls for its backward hooks. A ScriptModule subclass with a plain
``def forward`` calls its scripted children through ``_call_impl``, and ``RecursiveScriptModule``
stubs ``_get_backward_hooks``/``_get_backward_pre_hooks`` with methods that raise. The same hits
any eager model holding a ``torch.jit.script``-ed child. The user never called the refused method.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from repro.catalogue import edits
from repro.catalogue.bug import WITH_CHILDREN, global_backward_hooks_allowed, raised_instead, scope
from repro.catalogue.declare import declare
from repro.catalogue.fixes import Candidate, Sources
from repro.source_checks import MODULE_PY, SCRIPT_PY, Trees, call_impl_uses, find, find_assignment, method
from repro.traits import Traits

if TYPE_CHECKING:  # the engine imports torch; the tracker reads signatures without it
    from repro.engine.oracle import ScenarioResult

STUBBED = ("_get_backward_hooks", "_get_backward_pre_hooks")


def recognise(result: ScenarioResult) -> bool:
    return raised_instead(result, *(f"{name} is not supported on ScriptModules" for name in STUBBED))


def applies(trees: Trees) -> str | None:
    if method(trees[MODULE_PY], "Module", "_get_backward_hooks") is None:
        return f"{MODULE_PY}: Module._get_backward_hooks not found"
    return None


def _call_impl_asks(trees: Trees) -> tuple[bool, str]:
    asks = call_impl_uses(trees, "_get_backward_hooks")
    if asks is None:
        return False, f"{MODULE_PY}: Module._call_impl no longer asks for _get_backward_hooks"
    return (
        True,
        f"{MODULE_PY}:{getattr(asks, 'lineno', '?')}: Module._call_impl asks every module for _get_backward_hooks",
    )


def _stubs_raise(trees: Trees) -> tuple[bool, str]:
    recursive = find(trees[SCRIPT_PY], ast.ClassDef, "RecursiveScriptModule")
    make_fail = find(trees[SCRIPT_PY], ast.FunctionDef, "_make_fail")
    if recursive is None or make_fail is None:
        return False, f"{SCRIPT_PY}: RecursiveScriptModule or its _make_fail stubs not found"
    if any(find(recursive, ast.FunctionDef, name) for name in STUBBED):
        return False, f"{SCRIPT_PY}:{recursive.lineno}: RecursiveScriptModule defines its own _get_backward_hooks"
    allowlist = find_assignment(trees[SCRIPT_PY], "_compiled_methods_allowlist")
    if allowlist is not None and any(isinstance(n, ast.Constant) and n.value in STUBBED for n in ast.walk(allowlist)):
        return (
            False,
            f"{SCRIPT_PY}:{allowlist.lineno}: _compiled_methods_allowlist now lets _get_backward_hooks through",
        )
    return True, f"{SCRIPT_PY}:{make_fail.lineno}: RecursiveScriptModule stubs _get_backward_hooks with _make_fail"


def root_cause(evidence: list[str]) -> list[str]:
    import torch

    from repro.catalogue.measure import first_line, line_of, subclass

    model = subclass(script_method=False)
    try:
        model.child._get_backward_hooks()
        stub = "returns normally here"
    except RuntimeError as err:
        stub = f"raises {first_line(err)}"
    return [
        "Once a global backward hook is registered (register_module_full_backward_hook, "
        f"{line_of(MODULE_PY, 'def register_module_full_backward_hook')}; the legacy and pre variants too), "
        f"Module._call_impl asks every module it calls for its backward hooks ({evidence[0]}).",
        f"A plain Python forward calls its children through Module.__call__: measured, model.child of a "
        f"ScriptModule subclass is a {type(model.child).__name__}, a torch.jit.script-ed child a "
        f"{type(torch.jit.script(torch.nn.Linear(2, 2))).__name__}.",
        f"RecursiveScriptModule stubs the hook methods with raising ones ({evidence[1]}); measured, "
        f"model.child._get_backward_hooks() {stub}. The user never called it.",
    ]


# --- fixing it: RecursiveScriptModule keeps nn.Module's own backward-hook methods (what the workaround
# gives it at run time), so that Module._call_impl can ask a scripted child for its hooks.

ALLOWED = [*STUBBED, "_maybe_warn_non_full_backward_hook"]


def patch_allowlist(sources: Sources) -> dict[str, str]:
    """``_compiled_methods_allowlist`` lets the backward-hook methods through."""
    return {
        SCRIPT_PY: edits.append_items(
            edits.source(sources, SCRIPT_PY), SCRIPT_PY, "_compiled_methods_allowlist", ALLOWED
        )
    }


ERRORS = tuple(f"{name} is not supported on ScriptModules" for name in STUBBED)
SCOPE = scope((*WITH_CHILDREN, "in eager parent, with child"), ("plain_forward",)) + scope(
    ("scripted child",), ("torch.jit.script",)
)


def reach(t: Traits) -> bool:
    """Any model where some forward runs compiled (the stubs are on every ScriptModule)."""
    return t.compiled


PIECES = (_call_impl_asks, _stubs_raise)
FINGERPRINTED = (
    (MODULE_PY, "Module._call_impl"),
    (SCRIPT_PY, "_compiled_methods_allowlist"),
    (SCRIPT_PY, "_make_fail"),
)
CANDIDATES = (
    Candidate(
        "workaround",
        "user",
        "repro.workaround.allow_global_backward_hooks() while global backward hooks are registered",
        apply=global_backward_hooks_allowed,
    ),
)

BUG = declare(__name__)
