"""Hooks on a child that is itself a ScriptModule subclass never run under a ``script_method`` forward.

A ScriptModule subclass nested in another keeps its Python wrapper, so ``model.child`` is that
wrapper and its hook methods register without error. But the parent's compiled ``forward`` calls
the child inside TorchScript, never through the wrapper's ``Module.__call__`` (``_call_impl``), which
is what runs hooks: they are silently skipped (the mechanism of ``global-hooks-root-only``). With a
plain Python ``forward`` the call goes through the wrapper and the hooks run. Unlike a plain
submodule (``m.linear``), whose hook methods refuse by design, nothing says so. No upstream report
was found (related: pytorch/pytorch#36131, hooks for ScriptModules, closed unmerged).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from repro.catalogue import edits
from repro.catalogue.bug import NESTED, fewer_calls, routed, scope, traits_of
from repro.catalogue.declare import declare
from repro.catalogue.fixes import PatchError, Sources
from repro.catalogue.shared import BYPASSED_CHILD_CASES, call_impl_runs_global_hooks, script_method_compiles
from repro.source_checks import MODULE_PY, SCRIPT_PY
from repro.traits import Traits

if TYPE_CHECKING:  # the engine imports torch; the tracker reads signatures without it
    from repro.engine.oracle import ScenarioResult

CASES = BYPASSED_CHILD_CASES
APIS = (
    "register_forward_hook",
    "register_forward_pre_hook",
    "register_full_backward_pre_hook",
    "register_full_backward_hook",
)


def recognise(result: ScenarioResult) -> bool:
    """Hooks on the ScriptModule-subclass child recorded fewer calls than eager's, none other."""
    traits = traits_of(result)
    bypassed = traits is not None and traits.subclass_inside_torchscript
    return bypassed and bool(result.scenario.apis & set(APIS)) and fewer_calls(result)


def root_cause(evidence: list[str]) -> list[str]:
    from repro.catalogue.measure import CALL_METHOD, calls_children_in_torchscript, subclass

    model = subclass(script_method=True, child="subclass")
    inside = calls_children_in_torchscript(model)
    return [
        "A ScriptModule subclass nested in another keeps its Python wrapper: measured, model.child is an "
        f"instance of the user's class {type(model.child).__name__}, whose hook methods register into its own dicts.",
        f"Module._call_impl runs a module's hooks when it is called through Python ({evidence[0]}).",
        f"@torch.jit.script_method compiles the parent's forward ({evidence[1]}); measured, it "
        f"{'calls' if inside else 'does not call'} the child with prim::CallMethod, inside TorchScript.",
        f"There {CALL_METHOD}: the child's hooks never run, and nothing says so.",
    ]


# --- fixing it: a compiled forward calls its children inside TorchScript (C++), where no Python hook can run,
# so the patch marks each ScriptModule-subclass child when its parent's class compiles forward, and the
# child's hook methods then refuse, naming the parent (loud).

MARK = "_called_from_torchscript_by"
REFUSAL = "calls it inside TorchScript, not through Python"
MARKING = [
    "# a compiled forward calls its children inside TorchScript: hooks on a child's",
    "# wrapper never run (a subclass's own Python forward, which Python finds first,",
    "# calls them through their wrappers)",
    "if isinstance(",
    '    next(k.__dict__["forward"] for k in cls.__mro__ if "forward" in k.__dict__),',
    "    _CachedForward,",
    "):",
    "    for child in self._modules.values():",
    "        if (",
    "            isinstance(child, ScriptModule)",
    '            and "_actual_script_module" in child.__dict__',
    "        ):",
    f'            child.__dict__["{MARK}"] = cls.__name__',
]
REFUSING = [
    "def _refuse_hooks_that_never_run(self, method: str) -> None:",
    f'    parent = self.__dict__.get("{MARK}")',
    "    if parent is not None:",
    "        raise RuntimeError(",
    '            f"{method} on this {type(self).__name__} would never run its hook: the "',
    '            f"compiled forward of its parent {parent} "',
    f'            "{REFUSAL}. "',
    '            f"Give {parent} a plain Python forward, or hook the "',
    '            "parent."',
    "        )",
    "",
    *(
        line
        for name in APIS
        for line in (
            f"def {name}(self, *args, **kwargs):",
            f'    self._refuse_hooks_that_never_run("{name}")',
            f"    return super().{name}(*args, **kwargs)",
            "",
        )
    ),
][:-1]


def refuse_hooks_on_children_called_in_torchscript(sources: Sources) -> dict[str, str]:
    """``init_then_script`` marks the children; ``ScriptModule``'s hook methods refuse on a marked one."""
    text, tree = edits.opened(sources, SCRIPT_PY)
    edits.unpatched(SCRIPT_PY, text, MARK, "already marks children called inside TorchScript")
    wrapped = edits.statement(
        tree,
        lambda node: (
            isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "self.__dict__['_actual_script_module']"
        ),
    )
    if wrapped is None:
        raise PatchError(f"{SCRIPT_PY}: init_then_script no longer sets self.__dict__['_actual_script_module'].")
    text = edits.insert(text, wrapped.lineno, MARKING, edits.indent_of(text, wrapped.lineno))
    return {SCRIPT_PY: edits.add_method(text, SCRIPT_PY, "ScriptModule", "__setattr__", REFUSING)}


SCOPE = scope(NESTED, ("script_method",))


def reach(t: Traits) -> bool:
    """A ScriptModule subclass that a compiled forward calls."""
    return t.subclass_inside_torchscript


PIECES = (call_impl_runs_global_hooks, script_method_compiles)
FINGERPRINTED = ((MODULE_PY, "Module._call_impl"), (SCRIPT_PY, "script_method"))
apply_workaround = routed("register_full_backward_hook")

BUG = declare(__name__)
