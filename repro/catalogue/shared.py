"""What more than one bug reads: static-signature pieces over torch's sources, and the scenarios where a
child's hooks sit behind compiled code. Bugs import this module, never another bug's."""

from __future__ import annotations

import ast

from repro.source_checks import MODULE_PY, SCRIPT_PY, Trees, call_impl_uses, find, method

# The hook scenarios on a child that is itself a ScriptModule subclass, where a script_method forward
# calls the child inside TorchScript: the cases of the bug about that bypass, which the recognisers of
# the hook-method bugs leave to it.
BYPASSED_CHILD_CASES = (
    "on a child that is itself a ScriptModule subclass",
    "on a ScriptModule subclass inside an eager parent",
)


def call_impl_runs_global_hooks(trees: Trees) -> tuple[bool, str]:
    reads = call_impl_uses(trees, "_global_forward_hooks")
    if reads is None:
        return False, f"{MODULE_PY}: Module._call_impl no longer runs _global_forward_hooks"
    return True, f"{MODULE_PY}:{getattr(reads, 'lineno', '?')}: Module._call_impl runs global hooks per Python call"


def script_method_compiles(trees: Trees) -> tuple[bool, str]:
    script_method = find(trees[SCRIPT_PY], ast.FunctionDef, "script_method")
    if script_method is None:
        return False, f"{SCRIPT_PY}: script_method not found"
    return True, f"{SCRIPT_PY}:{script_method.lineno}: script_method compiles forward, whose child calls bypass Python"


def deepcopy_wraps_cpp_copy(trees: Trees) -> tuple[bool, str]:
    """``RecursiveScriptModule.__deepcopy__`` wraps a copy of the C++ module: the copy's Python side is
    made anew (bare wrappers), and its tensors are what the C++ copy made of them."""
    deepcopy = method(trees[SCRIPT_PY], "RecursiveScriptModule", "__deepcopy__")
    if deepcopy is None:
        return False, f"{SCRIPT_PY}: RecursiveScriptModule.__deepcopy__ not found"
    wraps = any(isinstance(n, ast.Attribute) and n.attr == "wrap_cpp_module" for n in ast.walk(deepcopy))
    if not wraps:
        return False, f"{SCRIPT_PY}:{deepcopy.lineno}: RecursiveScriptModule.__deepcopy__ no longer wraps the C++ copy"
    return True, f"{SCRIPT_PY}:{deepcopy.lineno}: RecursiveScriptModule.__deepcopy__ wraps a copy of the C++ module"
