"""A compiled module's ``state_dict`` holds the buffers registered with ``persistent=False``.

``nn.Module.register_buffer(name, t, persistent=False)`` keeps ``name`` in the module's
``_non_persistent_buffers_set``, and ``state_dict`` and ``load_state_dict`` leave those buffers out.
``torch.jit.script`` (and a ScriptModule subclass compiling an eager child) copies the buffer into the
C++ module but not the set, which ``torch/jit/_recursive.py`` lists among its ``ignored_attributes``:
the ``RecursiveScriptModule`` starts with an empty one. Its ``state_dict`` then holds the buffer, with no
error: a checkpoint carries a running statistic meant to stay out, an eager model's strict
``load_state_dict`` of it fails on the unexpected key, and the compiled model's strict load of an eager
checkpoint fails on the missing one. A ScriptModule subclass refuses such a buffer of its own ("ScriptModule
does not support non-persistent buffers"). Upstream: pytorch/pytorch#45012 and #65398 (open).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from repro.catalogue import edits
from repro.catalogue.bug import scope
from repro.catalogue.declare import declare
from repro.catalogue.texts import inserted
from repro.source_checks import MODULE_PY, RECURSIVE_PY, Trees, find, ignored_attributes_node, mentions
from repro.traits import Traits
from repro.vocabulary import Verdict

if TYPE_CHECKING:  # the engine imports torch; the tracker reads signatures without it
    from repro.engine.oracle import ScenarioResult

APIS = ("state_dict", "load_state_dict")
KEYS = "state_dict keys"  # what the scenario and the explorer note
SET = "_non_persistent_buffers_set"


def recognise(result: ScenarioResult) -> bool:
    """The compiled model's ``state_dict`` holds every key eager's holds, and more."""
    if not result.scenario.apis & set(APIS) or result.verdict != Verdict.DIFFERS:
        return False
    scripted, eager = (side.observation.get(KEYS) if side else None for side in (result.scripted, result.eager))
    return isinstance(scripted, list) and isinstance(eager, list) and set(scripted) > set(eager)


def _the_set_is_not_compiled(trees: Trees) -> tuple[bool, str]:
    node = ignored_attributes_node(trees[RECURSIVE_PY])
    if node is None or not mentions(node, SET):
        return False, f"{RECURSIVE_PY}: ignored_attributes no longer lists {SET}"
    return True, f"{RECURSIVE_PY}:{node.lineno}: ignored_attributes lists {SET}: scripting leaves it behind"


def _init_fn_leaves_it(trees: Trees) -> tuple[bool, str]:
    impl = find(trees[RECURSIVE_PY], ast.FunctionDef, "create_script_module_impl")
    if impl is None:
        return False, f"{RECURSIVE_PY}: create_script_module_impl not found"
    if any(isinstance(n, ast.Attribute) and n.attr == SET for n in ast.walk(impl)):
        return False, f"{RECURSIVE_PY}:{impl.lineno}: create_script_module_impl now sets {SET}"
    return True, f"{RECURSIVE_PY}:{impl.lineno}: create_script_module_impl copies the buffers, never {SET}"


def root_cause(evidence: list[str]) -> list[str]:
    import torch

    from repro.catalogue.measure import line_of

    eager = torch.nn.Module()
    eager.register_buffer("scale", torch.ones(1), persistent=False)
    compiled = torch.jit.script(eager)
    return [
        f"register_buffer(..., persistent=False) records the name in {SET} "
        f"({line_of(MODULE_PY, f'self.{SET}.add(name)')}).",
        f"{evidence[0]}; {evidence[1]}: the RecursiveScriptModule's set is the empty one nn.Module.__init__ "
        f"made (measured: {sorted(compiled.__dict__.get(SET, set()))}).",
        f"Module._save_to_state_dict keeps every buffer not in that set "
        f"({line_of(MODULE_PY, f'name not in self.{SET}', after='def _save_to_state_dict')}): measured, the "
        f"compiled module's state_dict holds {sorted(compiled.state_dict())}, eager's "
        f"{sorted(eager.state_dict())}.",
    ]


# --- fixing it: create_script_module_impl's init_fn gives the compiled module the eager module's set.

keep_the_set = edits.Insertion(
    RECURSIVE_PY,
    lambda tree: _first_loop_of_init_fn(tree),
    edits.Where.AFTER,
    inserted(__name__, "kept"),
    f"{RECURSIVE_PY}: create_script_module_impl's init_fn no longer copies the attributes in a loop.",
    "persistent=False stay out of state_dict",
    "already keeps the non-persistent buffers out of the compiled module's state_dict",
)


def _first_loop_of_init_fn(tree: ast.Module) -> ast.AST | None:
    impl = find(tree, ast.FunctionDef, "create_script_module_impl")
    init_fn = find(impl, ast.FunctionDef, "init_fn") if impl else None
    return next((node for node in init_fn.body if isinstance(node, ast.For)), None) if init_fn else None


SCOPE = scope(("non-persistent buffer child",))


def reach(t: Traits) -> bool:
    """A module TorchScript compiles holds a buffer registered with ``persistent=False``."""
    return t.nonpersistent_buffer_compiled


PIECES = (_the_set_is_not_compiled, _init_fn_leaves_it)
FINGERPRINTED = ((RECURSIVE_PY, "ignored_attributes"), (RECURSIVE_PY, "create_script_module_impl"))

BUG = declare(__name__)
