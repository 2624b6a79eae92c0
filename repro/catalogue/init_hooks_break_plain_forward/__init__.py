"""A hook registered in ``__init__`` of a ScriptModule subclass with a plain forward breaks construction.

A ScriptModule subclass is compiled when its ``__init__`` returns, and TorchScript compiles the
forward hooks and pre-hooks the module has at that moment (upstream's test/jit/test_hooks.py: by
design, a hook TorchScript cannot compile is refused, with a hint to remove it). Each hook's
signature is checked against the compiled ``forward``. With a plain Python forward there is none,
and construction fails with "Couldn't find method: 'forward' on class ...", naming a method the
class plainly has. Eager registers the same hooks in ``__init__`` and runs them on every call.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from repro.catalogue import edits
from repro.catalogue.bug import raised, scope
from repro.catalogue.declare import declare
from repro.catalogue.texts import inserted
from repro.source_checks import RECURSIVE_PY
from repro.traits import Traits

if TYPE_CHECKING:  # the engine imports torch; the tracker reads signatures without it
    from repro.engine.oracle import ScenarioResult

MESSAGE = "Couldn't find method: 'forward'"
CASE = "a forward hook and pre-hook registered in __init__ change every call's output"
SAVED = "keeps a forward hook and pre-hook registered in __init__: the loaded module runs them"  # torch.jit.save's


def root_cause(evidence: list[str]) -> list[str]:
    import torch

    from repro.catalogue.measure import line_of

    def hook(module, args, output):
        return None

    class Net(torch.jit.ScriptModule):
        def __init__(self) -> None:
            super().__init__()
            self.linear = torch.nn.Linear(2, 2)
            self.register_forward_hook(hook)

        def forward(self, x):
            return self.linear(x)

    try:
        Net()
        measured = "construction succeeded"
    except RuntimeError as err:
        measured = f"construction raised {str(err).splitlines()[0].split(' on class')[0]}"
    return [
        "A ScriptModule subclass is compiled when __init__ returns (ScriptModule's metaclass, "
        f"{line_of('torch/jit/_script.py', 'def init_then_script')}).",
        "Compiling a module also compiles its forward hooks and pre-hooks "
        f"({line_of('torch/jit/_recursive.py', 'def get_hook_stubs')}), each checked against the compiled "
        "forward's schema (torch/csrc/jit/frontend/ir_emitter.cpp or concrete_module_type.cpp in C++).",
        f"A plain forward is not compiled, so there is no schema to check against: measured, {measured}.",
    ]


def recognise(result: ScenarioResult) -> bool:
    """Building the model raised TorchScript's 'no forward' while compiling its hooks (in any of its
    cases: each builds the model first)."""
    return raised(result, MESSAGE)


# --- fixing it: hooks registered before scripting are compiled against the compiled forward, in C++; with
# no compiled forward there is nothing to check them against, so the patch refuses them with a sentence
# that says so, before the C++ check names a method the class plainly has (loud).

REFUSAL = "hooks registered before it was compiled need a compiled forward"
STUBS = "hook_stubs, pre_hook_stubs = get_hook_stubs(nn_module)"
refuse_hooks_without_forward = edits.Insertion(  # in create_script_module_impl, before compiling hooks
    RECURSIVE_PY,
    lambda tree: edits.statement(tree, lambda node: ast.unparse(node) == STUBS),
    edits.Where.AFTER,
    inserted(__name__, "refuse_hooks_without_forward"),
    missing=f"{RECURSIVE_PY} has no '{STUBS}' line to check after.",
    marker=REFUSAL,
    already="already refuses hooks without a compiled forward",
)

CASES = (CASE, SAVED)
SCOPE = scope(("hooked in __init__, before children", "hooked in __init__, after children"), ("plain_forward",))


def reach(t: Traits) -> bool:
    """Hooks registered in the __init__ of a subclass with a plain forward."""
    return t.init_hooks_plain_forward


BUG = declare(__name__)
