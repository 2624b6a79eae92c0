"""``torch.jit.save`` of a ScriptModule subclass drops the forward hooks registered after construction.

TorchScript compiles a module's forward hooks and pre-hooks when it compiles the module, and a
ScriptModule subclass is compiled when its ``__init__`` returns. A hook registered afterwards goes
into the Python wrapper's hook dicts only, where ``nn.Module.__call__`` runs it: the model behaves
as eager's in the process that registered it. ``torch.jit.save`` writes the compiled module, which
never had the hook, and says nothing; the loaded module computes something else, possibly on another
machine. Eager's way to the same file, ``torch.jit.script(model)`` after registering the hooks, compiles
them (or refuses one TorchScript cannot compile). A subclass inside an eager parent loses them the
same way when ``torch.jit.script`` compiles the parent for saving. Related upstream:
pytorch/pytorch#34329 (hook support in TorchScript).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from repro.catalogue import edits
from repro.catalogue.bug import ROOTS, scope
from repro.catalogue.declare import declare
from repro.catalogue.texts import inserted
from repro.source_checks import MODULE_PY, RECURSIVE_PY, SCRIPT_PY, find
from repro.traits import SCRIPT_METHOD, Traits
from repro.vocabulary import Verdict

if TYPE_CHECKING:  # the engine imports torch; the tracker reads signatures without it
    from repro.engine.oracle import ScenarioResult

SAVE = "torch.jit.save"
HOOK_APIS = frozenset({"register_forward_hook", "register_forward_pre_hook"})
SERIALIZATION = "torch/jit/_serialization.py"


def recognise(result: ScenarioResult) -> bool:
    """Saving and loading went through without an error, after forward hooks were registered, where
    eager's saved module computed otherwise or its torch.jit.script refused the hooks. The departing
    step is the save itself (a generated case's scenario is named after its departing step)."""
    if result.verdict != Verdict.DIFFERS or result.scenario.api != SAVE or not HOOK_APIS & result.scenario.apis:
        return False
    mine = result.scripted
    return mine is not None and mine.error is None and not mine.observation.get("raised")


def root_cause(evidence: list[str]) -> list[str]:
    import io

    import torch

    from repro.catalogue.measure import line_of, subclass

    model = subclass()
    model.register_forward_hook(lambda module, args, output: output * 2)
    buffer = io.BytesIO()
    torch.jit.save(model, buffer)
    buffer.seek(0)
    loaded = torch.jit.load(buffer)
    return [
        "TorchScript compiles a module's forward hooks and pre-hooks with the module "
        f"({line_of(RECURSIVE_PY, 'get_hook_stubs(nn_module)', after='def create_script_module_impl')}), and a "
        f"ScriptModule subclass is compiled when its __init__ returns ({line_of(SCRIPT_PY, 'def init_then_script')}).",
        "A hook registered afterwards goes into the Python wrapper's dict "
        f"({line_of(MODULE_PY, 'self._forward_hooks[handle.id] = hook')}), which nn.Module.__call__ runs: "
        f"measured, the wrapper holds {len(model._forward_hooks)} forward hook(s), the compiled module "
        f"{len(model._c._get_forward_hooks())}.",
        f"torch.jit.save writes the compiled module ({line_of(SERIALIZATION, 'm.save_to_buffer(')}) and never reads "
        f"the wrapper's hooks: measured, the loaded module holds {len(loaded._forward_hooks)} forward hook(s), "
        "and nothing warned.",
    ]


# --- fixing it: the compiled module is what TorchScript serialises (C++), and compiling a hook into it
# after construction would change every instance sharing its class, so the patch makes torch.jit.save
# refuse a module whose wrapper holds hooks the compiled module lacks (loud).

REFUSAL = "torch.jit.save would save the module without it"
refuse_dropped_hooks = edits.Insertion(  # torch.jit.save checks the hooks before it writes
    SERIALIZATION,
    lambda tree: find(tree, ast.FunctionDef, "save"),
    edits.Where.AT_START,
    inserted(__name__, "refuse_dropped_hooks"),
    missing=f"{SERIALIZATION} has no function save.",
    marker=REFUSAL,
    already="already refuses hooks it would drop",
)

SCOPE = scope(ROOTS, ("script_method",))


def reach(t: Traits) -> bool:
    """A subclass with a script_method forward anywhere in the model (a plain forward saves none): a
    hook registered on it after construction is not in what torch.jit.save writes, whether it is
    saved itself or inside an eager parent torch.jit.script compiles (the explorer's cases)."""
    return SCRIPT_METHOD in t.styles


BUG = declare(__name__)
