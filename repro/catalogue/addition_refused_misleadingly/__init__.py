"""Adding a child, parameter or buffer to a ScriptModule subclass after ``__init__`` is refused with a
message that blames something else.

``nn.Module`` lets a model grow after construction (``add_module``, ``register_module``,
``register_parameter``, ``register_buffer`` with a new name). On a ScriptModule subclass each is
refused, and none of the messages says why:
- a new child: "Cannot re-assign modules in a ScriptModule with non-scripted module, tried to replace
  existing module 'extra'": no module of that name exists (``OrderedModuleDict.__setitem__`` in
  ``torch/jit/_script.py`` raises for any key). Replacing an existing child is refused on purpose
  (upstream test ``test_script_module_nochange_submodule``); adding one is nowhere documented.
- a new parameter or buffer, or one under an existing name: "cannot assign parameter (buffer) before
  Module.__init__() call", raised by ``Module.register_parameter`` (``register_buffer``) because the
  wrapper's ``__dict__`` lost ``_parameters`` (``_buffers``) when ``init_then_script`` moved them to
  the compiled module; the model's ``__init__`` did run. Assigning an existing parameter works.
- a buffer on a child: "Can't add a new parameter after ScriptModule construction", for a buffer;
  a child on a child: "tried to replace existing module".
Found by trying each refusal in every variant of its operation (new and existing names, method and
assignment, root and child). No upstream report was found (related: pytorch/pytorch#27475,
script::Module API parity with nn.Module).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from repro.catalogue import edits
from repro.catalogue.bug import ROOTS, raised, scope
from repro.catalogue.declare import declare
from repro.catalogue.fixes import Sources
from repro.source_checks import SCRIPT_PY, method
from repro.traits import Traits

if TYPE_CHECKING:  # the engine imports torch; the tracker reads signatures without it
    from repro.engine.oracle import ScenarioResult

NEW_CHILD = "tried to replace existing module 'extra'"  # the new child every adding scenario names ``extra``
PARAMETER = "cannot assign parameter before Module.__init__() call"
BUFFER = "cannot assign buffer before Module.__init__() call"
# Each addition, in each variant where its refusal misleads, with the misleading text.
MISLEADS = {
    "adds a child after __init__": NEW_CHILD,
    "adds a child to a child after __init__": NEW_CHILD,
    "assigns a new eager child under a new name": NEW_CHILD,
    "adds a parameter after __init__": PARAMETER,
    "adds a parameter under an existing name": PARAMETER,
    "adds a buffer after __init__": BUFFER,
    "adds a buffer under an existing name": BUFFER,
    "adds a buffer to a child after __init__": "Can't add a new parameter after ScriptModule construction",
}
CASES = tuple(MISLEADS)


def root_cause(evidence: list[str]) -> list[str]:
    from repro.catalogue.measure import line_of, subclass

    model = subclass()
    lost = [name for name in ("_parameters", "_buffers", "_modules") if name not in model.__dict__]
    module_py, script_py = "torch/nn/modules/module.py", "torch/jit/_script.py"
    return [
        "When the subclass's __init__ returns, init_then_script compiles it and moves its parameters, buffers "
        f"and children to the compiled module ({line_of(script_py, 'def init_then_script')}); measured, the "
        f"wrapper's __dict__ no longer has {', '.join(lost) or 'nothing missing'}.",
        "Module.register_parameter and register_buffer look for _parameters (_buffers) in __dict__ and, not "
        f"finding it, raise 'cannot assign ... before Module.__init__() call' "
        f"({line_of(module_py, 'cannot assign buffer before Module.__init__() call')}): __init__ did run.",
        "A new child goes to the compiled module's OrderedModuleDict, whose __setitem__ refuses any eager "
        f"module as 'tried to replace existing module' ({line_of(script_py, 'tried to replace existing module')}), "
        "whether or not a module of that name exists.",
    ]


def recognise(result: ScenarioResult) -> bool:
    if result.scenario.traits is not None:  # a generated model's addition: any of the misleading texts
        return raised(result, *set(MISLEADS.values()))
    return result.scenario.name in MISLEADS and raised(result, MISLEADS[result.scenario.name])


# --- fixing it: a ScriptModule's class is compiled when __init__ returns, so nothing can be added after
# (C++ holds the compiled type); the patch keeps every refusal and makes each say so, where each addition
# arrives: the wrapper's register_parameter/register_buffer, and the compiled module's dictionaries of
# children and of parameters and buffers (loud).

REFUSAL = "to a ScriptModule after construction"
WHY = "TorchScript compiled its class when __init__ returned"


def _refusal(what: str, indent: str = "") -> list[str]:
    return [
        f"{indent}raise RuntimeError(",
        f'{indent}    f"Cannot add {what} {REFUSAL}: "',
        f'{indent}    "{WHY}. Add it in __init__."',
        f"{indent})",
    ]


REGISTER = [
    *(
        line
        for kind, signature in (("parameter", "name, param"), ("buffer", "name, tensor, persistent=True"))
        for line in (
            f"def register_{kind}(self, {signature}):",
            '    if "_actual_script_module" in self.__dict__:',
            *_refusal(f"the {kind} '{{name}}'", "        "),
            f"    return super().register_{kind}({signature.replace('=True', '=persistent')})",
            "",
        )
    ),
][:-1]


def refuse_additions_clearly(sources: Sources) -> dict[str, str]:
    """Three places, each refusing an addition in words that say why."""
    text = edits.source(sources, SCRIPT_PY)
    edits.unpatched(SCRIPT_PY, text, REFUSAL, "already refuses additions after construction in its own words")
    modules_setitem = edits.required(
        method(edits.parse(SCRIPT_PY, text), "OrderedModuleDict", "__setitem__"),
        f"{SCRIPT_PY}: OrderedModuleDict.__setitem__ not found.",
    )
    text = edits.at_start(text, modules_setitem, ["if k not in self:", *_refusal("the module '{k}'", "    ")])
    wrapper_setitem = method(edits.parse(SCRIPT_PY, text), "OrderedDictWrapper", "__setitem__")
    new_key = edits.required(
        edits.statement(wrapper_setitem, edits.if_testing("k not in self")) if wrapper_setitem else None,
        f"{SCRIPT_PY}: OrderedDictWrapper.__setitem__ has no 'if k not in self:' check.",
    )
    text = edits.replaced_by(text, new_key, ["if k not in self:", *_refusal("'{k}'", "    ")])
    return {SCRIPT_PY: edits.add_method(text, SCRIPT_PY, "ScriptModule", "__setattr__", REGISTER)}


SCOPE = scope(ROOTS)


def reach(t: Traits) -> bool:
    """Any model holding a ScriptModule subclass (the addition may be on it)."""
    return t.subclass


BUG = declare(__name__)
