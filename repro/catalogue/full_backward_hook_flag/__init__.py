"""``register_full_backward_hook`` / ``register_backward_hook`` raise on a ScriptModule subclass.

``nn.Module.__init__`` sets ``_is_full_backward_hook = None``; scripting turns it into a C++
attribute typed NoneType (it is missing from ``ignored_attributes``); the registration's
``self._is_full_backward_hook = True`` is forwarded by ``ScriptModule.__setattr__`` to the C++
setter, which cannot cast True to None. Where the error is silenced (torch 1.13.1's first
instance, or the ``ignored_attributes`` one-liner) the flag stays None and no hook ever runs.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from repro.catalogue import edits
from repro.catalogue.bug import NESTED, SUBCLASS_SHAPES, fewer_calls, raised, routed, scope
from repro.catalogue.declare import declare
from repro.catalogue.fixes import Candidate, PatchError, Sources
from repro.catalogue.measure import SCRIPT_INIT
from repro.catalogue.shared import BYPASSED_CHILD_CASES
from repro.catalogue.texts import inserted
from repro.environment import import_torch
from repro.source_checks import (
    FLAG,
    MODULE_PY,
    RECURSIVE_PY,
    SCRIPT_PY,
    Check,
    StaticVerdict,
    Trees,
    assigns,
    forwarding_call,
    ignored_attributes_node,
    loaded_sources,
    mentions_flag,
    method,
    setattr_forwards,
    static_verdict,
)
from repro.traits import SCRIPT_METHOD, Traits

if TYPE_CHECKING:  # the engine imports torch; the tracker reads signatures without it
    from repro.engine.oracle import ScenarioResult

SIGNATURE = f"Could not cast attribute '{FLAG}'"


APIS = ("register_full_backward_hook", "register_backward_hook")


def recognise(result: ScenarioResult) -> bool:
    """Its error, or (where silenced) hooks registered through its two APIs that never run; on a child
    that is itself a ScriptModule subclass under a script_method forward, hooks that never run are
    child-hooks-bypassed's."""
    scenario = result.scenario
    if scenario.traits is not None:  # a generated model: hooks on any module, some maybe inside TorchScript
        bypassed = scenario.traits.subclass_inside_torchscript
    else:  # a named one: the hooked child is called inside TorchScript under its parent's script_method
        bypassed = scenario.name in BYPASSED_CHILD_CASES and scenario.model in NESTED and result.style == SCRIPT_METHOD
    return raised(result, SIGNATURE) or (
        bool(result.scenario.apis & set(APIS)) and fewer_calls(result) and not bypassed
    )


def applies(trees: Trees) -> str | None:
    if method(trees[MODULE_PY], "Module", "register_full_backward_hook") is None:
        return f"{MODULE_PY}: Module.register_full_backward_hook not found (added in torch 1.8)"
    return None


def root_cause(evidence: list[str]) -> list[str]:
    """The chain ``explain`` measures: the flag's C++ type, the wrapper, the lines."""
    return explain().chain()


def _ignored_attributes(trees: Trees) -> tuple[bool, str]:
    node = ignored_attributes_node(trees[RECURSIVE_PY])
    if node is None:
        return False, f"{RECURSIVE_PY}: no module-level ignored_attributes list"
    if mentions_flag(node):
        return False, f"{RECURSIVE_PY}:{node.lineno}: ignored_attributes now lists {FLAG!r}"
    return True, f"{RECURSIVE_PY}:{node.lineno}: ignored_attributes lacks {FLAG!r}"


def _module_assigns_flag(trees: Trees) -> tuple[bool, str]:
    register = method(trees[MODULE_PY], "Module", "register_full_backward_hook")
    if register is None:
        return False, f"{MODULE_PY}: Module.register_full_backward_hook not found"
    for node in ast.walk(register):
        if assigns(
            node,
            lambda t: (
                isinstance(t, ast.Attribute)
                and t.attr == FLAG
                and isinstance(t.value, ast.Name)
                and t.value.id == "self"
            ),
        ):
            return True, f"{MODULE_PY}:{node.lineno}: register_full_backward_hook assigns self.{FLAG} = ..."
    return False, f"{MODULE_PY}:{register.lineno}: register_full_backward_hook no longer assigns self.{FLAG}"


# Its static signature: the flag is left out of ignored_attributes, Module assigns it, and
# ScriptModule.__setattr__ forwards the assignment.
PIECES: tuple[Check, ...] = (_ignored_attributes, _module_assigns_flag, setattr_forwards(FLAG))


# --- fixing it: candidates, each judged by the scenarios with it in force (python -m repro --candidates),
# and the upstream patch (python -m repro --patch): two hunks, with paths as in a PyTorch checkout.
#   * torch/jit/_recursive.py: add the flag to ignored_attributes, so scripting does not turn it into a
#     C++ attribute typed NoneType (and does not delete the wrapper's copy);
#   * torch/jit/_script.py: ScriptModule.__setattr__ stores the flag on the Python wrapper, where
#     Module._get_backward_hooks reads it, instead of forwarding it.


@contextmanager
def add_flag_to_ignored_attributes() -> Iterator[None]:
    """The one-line fix most people propose: keep the flag out of the C++ class."""
    import_torch()
    import torch.jit._recursive

    ignored = torch.jit._recursive.ignored_attributes
    added = FLAG not in ignored
    if added:
        ignored.append(FLAG)
    try:
        yield
    finally:
        if added:
            ignored.remove(FLAG)


@contextmanager
def declare_jit_ignored_attributes() -> Iterator[None]:
    """User side: each ScriptModule subclass declares ``__jit_ignored_attributes__``; declared on the base
    class here, so that the fresh classes of first-instance runs inherit it too."""
    import_torch()
    import torch

    from repro.workaround import replaced

    with replaced(torch.jit.ScriptModule, "__jit_ignored_attributes__", [FLAG]):
        yield


SETATTR_BRANCH = list(inserted(__name__, "keep_the_flag_on_the_wrapper"))


def patch_recursive(sources: Sources) -> dict[str, str]:
    """``ignored_attributes`` lists the flag."""
    return {
        RECURSIVE_PY: edits.append_items(
            edits.source(sources, RECURSIVE_PY), RECURSIVE_PY, "ignored_attributes", [FLAG]
        )
    }


def patch_script(sources: Sources) -> dict[str, str]:
    """``ScriptModule.__setattr__`` keeps the flag on the wrapper."""
    text, tree = edits.opened(sources, SCRIPT_PY)
    setattr_method, call = forwarding_call(tree)
    if setattr_method is None or call is None:
        raise PatchError(f"{SCRIPT_PY}: ScriptModule.__setattr__ does not forward to _actual_script_module.")
    if mentions_flag(setattr_method):
        raise PatchError(f"{SCRIPT_PY}: ScriptModule.__setattr__ already special-cases {FLAG!r}.")
    return {SCRIPT_PY: edits.insert(text, call.lineno, SETATTR_BRANCH, edits.indent_of(text, call.lineno))}


def patch_both(sources: Sources) -> dict[str, str]:
    return {**patch_recursive(sources), **patch_script(sources)}


ERRORS = (SIGNATURE,)
SCOPE = scope(SUBCLASS_SHAPES)


def reach(t: Traits) -> bool:
    """Any model holding a ScriptModule subclass."""
    return t.subclass


FINGERPRINTED = (
    (RECURSIVE_PY, "ignored_attributes"),
    (SCRIPT_PY, "ScriptModule.__setattr__"),
    (MODULE_PY, "Module.register_full_backward_hook"),
    (MODULE_PY, "Module.register_backward_hook"),
    (MODULE_PY, "Module._get_backward_hooks"),
)
apply_workaround = routed("register_full_backward_hook", "register_backward_hook")
CANDIDATES = (
    Candidate(
        "ignored-attributes",
        "upstream",
        "add the flag to torch.jit._recursive.ignored_attributes",
        apply=add_flag_to_ignored_attributes,
    ),
    Candidate(
        "jit-ignored-attributes",
        "user",
        "declare __jit_ignored_attributes__ = ['_is_full_backward_hook']",
        apply=declare_jit_ignored_attributes,
    ),
    Candidate(
        "workaround",
        "user",
        "register through a helper that sets the flag on the Python wrapper first",
        apply=routed("register_full_backward_hook", "register_backward_hook"),
    ),
)

BUG = declare(__name__)


# --- its root cause, measured on the installed torch at run time, never hard-coded: what the scripted
# module really is (the type its C++ class gives the flag, whether the Python wrapper still holds it),
# and where the installed sources put the pieces (with file and line).


def analyse(sources: dict[str, str | None]) -> StaticVerdict:
    """Its pieces judged alone: no fingerprint, no check that its API exists (the tracker's probe)."""
    return static_verdict(sources, BUG.pieces)


WRAPPER = {True: "still holds", False: "no longer holds", None: "may or may not hold (not measured)"}


@dataclass(frozen=True)
class RootCause:
    flag_type: str  # the C++ attribute's type, or why it could not be read
    flag_on_wrapper: bool | None  # does the Python wrapper still hold the flag after scripting?
    static: StaticVerdict  # evidence lines: ignored_attributes, Module assignment, __setattr__

    def chain(self) -> list[str]:
        """The cause as numbered steps a reader can check against the cited lines."""
        ignored, assigns, forwards = (self.static.evidence + ["?", "?", "?"])[:3]
        return [
            f"nn.Module.__init__ sets self.{FLAG} = None on every module.",
            f"When a ScriptModule subclass finishes __init__, it is compiled and every instance attribute "
            f"not in torch.jit._recursive.ignored_attributes becomes an attribute of the C++ class "
            f"({ignored}). Measured here, {FLAG} is typed {self.flag_type} there, and the wrapper "
            f"{WRAPPER[self.flag_on_wrapper]} a Python copy.",
            f"register_full_backward_hook assigns True to the flag ({assigns}); "
            f"ScriptModule.__setattr__ forwards the assignment to the inner RecursiveScriptModule "
            f"({forwards}), whose C++ setter cannot cast True to {self.flag_type} ({SCRIPT_INIT}, "
            "ScriptObject setattr; register_backward_hook assigns False: same error).",
            "Module._get_backward_hooks reads the flag back on the outer module when it is called, "
            "so a fix must leave the wrapper reading True: one that only keeps the flag out of the "
            "C++ class silences the error while no backward hook ever runs.",
        ]


def explain() -> RootCause:
    """Measure the chain on the installed torch (call after ``environment.import_torch``)."""
    static = analyse(loaded_sources())
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from repro.engine.models import build_scripted

            model = build_scripted("flat", "plain_forward", "later", "cpu")
        # a ScriptModule's inner module and its C++ type are untyped in torch's stubs
        attributes = model._actual_script_module._concrete_type.get_attributes()  # type: ignore[union-attr,operator]
    except Exception as err:  # TorchScript disabled or raising: say so instead of guessing
        return RootCause(f"unknown (TorchScript unusable: {type(err).__name__}: {err})", None, static)
    if FLAG in attributes:
        flag_type = str(attributes[FLAG][0])
    else:
        flag_type = "nothing (not an attribute of the C++ class)"
    return RootCause(flag_type, FLAG in model.__dict__, static)
