"""Ways torch could fix the original bug, true and broken, as patched torch source files (test fixtures).

Each shape maps torch's installed sources to the files a fixed torch would have (path -> text), to be
served in place of the installed ones (``patched_torch_env``, ``run_patched --sources``, or a wheel's
``.pth`` file). The true shapes differ in *how* they fix it, so a test that passes under all three
asserts behaviour, not mechanism; the broken ones remove the error while the APIs still depart from
``nn.Module`` (or never run the hook), so none of them may ever read ``fixed``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from repro.catalogue.full_backward_hook_flag import patch_both as patched_sources
from repro.source_checks import FLAG, MODULE_PY, RECURSIVE_PY, SCRIPT_PY

Sources = dict[str, str]


def _with_method(script_py: str, method: str) -> str:
    """``torch/jit/_script.py`` with ``method`` added to ``class ScriptModule``, before its ``__setattr__``."""
    tree = ast.parse(script_py)
    cls = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == "ScriptModule")
    setattr_ = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__setattr__")
    indent = " " * setattr_.col_offset
    lines = script_py.split("\n")
    lines[setattr_.lineno - 1 : setattr_.lineno - 1] = [indent + line if line else line for line in method.split("\n")]
    return "\n".join(lines)


def setattr_on_wrapper(sources: Sources) -> Sources:
    """True: ``ScriptModule.__setattr__`` keeps the flag on the Python wrapper (the C++ attribute stays
    typed NoneType: nothing about the mechanism the report explains changes)."""
    return {SCRIPT_PY: patched_sources(sources)[SCRIPT_PY]}


def upstream_patch(sources: Sources) -> Sources:
    """True: the project's proposed upstream diff (``python -m repro --patch``)."""
    return patched_sources(sources)


def object_setattr(sources: Sources) -> Sources:
    """True: ``Module.register_full_backward_hook`` (and the legacy one) store the flag with
    ``object.__setattr__``, past ``ScriptModule.__setattr__``."""
    module = sources[MODULE_PY]
    for value in ("True", "False"):
        old = f"self.{FLAG} = {value}"
        assert old in module, f"{MODULE_PY} no longer assigns {old!r}"
        module = module.replace(old, f'object.__setattr__(self, "{FLAG}", {value})')
    return {MODULE_PY: module}


def _upstream_patch_with(sources: Sources, method: str) -> Sources:
    """The upstream patch, plus ``method`` in ``class ScriptModule``: a fix that also overrides an API."""
    patched = patched_sources(sources)
    return {**patched, SCRIPT_PY: _with_method(patched[SCRIPT_PY], method)}


def prepend_ignored(sources: Sources) -> Sources:
    """Broken: the error is gone and hooks run, but ``prepend=True`` is dropped on ScriptModules."""
    return _upstream_patch_with(
        sources,
        "def register_full_backward_hook(self, hook, prepend=False):\n"
        "    return super().register_full_backward_hook(hook)\n",
    )


def returned_grads_ignored(sources: Sources) -> Sources:
    """Broken: the error is gone and hooks run, but a hook's returned ``grad_input`` is thrown away."""
    return _upstream_patch_with(
        sources,
        "def register_full_backward_hook(self, hook, prepend=False):\n"
        "    def result_dropped(module, grad_input, grad_output):\n"
        "        hook(module, grad_input, grad_output)\n"
        "    return super().register_full_backward_hook(result_dropped, prepend=prepend)\n",
    )


def ignored_attributes_only(sources: Sources) -> Sources:
    """Broken: the one-liner most people propose (the flag in ``ignored_attributes``): no error, and
    the hook never runs."""
    return {RECURSIVE_PY: patched_sources(sources)[RECURSIVE_PY]}


TRUE: dict[str, Callable[[Sources], Sources]] = {
    "setattr-on-wrapper": setattr_on_wrapper,
    "upstream-patch": upstream_patch,
    "object-setattr": object_setattr,
}
BROKEN: dict[str, Callable[[Sources], Sources]] = {
    "prepend-ignored": prepend_ignored,
    "returned-grads-ignored": returned_grads_ignored,
    "ignored-attributes": ignored_attributes_only,
}
