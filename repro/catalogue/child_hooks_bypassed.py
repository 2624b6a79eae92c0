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

from typing import TYPE_CHECKING

from repro.catalogue.bug import NESTED, Bug, Workaround, fewer_calls, routed, scope
from repro.catalogue.global_hooks_root_only import _call_impl_runs_global_hooks, _script_method_compiles
from repro.source_checks import MODULE, SCRIPT

if TYPE_CHECKING:  # the engine imports torch; the tracker reads signatures without it
    from repro.engine.oracle import ScenarioResult

CASES = ("on a child that is itself a ScriptModule subclass", "on a ScriptModule subclass inside an eager parent")
APIS = (
    "register_forward_hook",
    "register_forward_pre_hook",
    "register_full_backward_pre_hook",
    "register_full_backward_hook",
)


def recognise(result: ScenarioResult) -> bool:
    """Hooks on the ScriptModule-subclass child recorded fewer calls than eager's, none other."""
    return result.scenario.model in NESTED and bool(result.scenario.apis & set(APIS)) and fewer_calls(result)


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


PASTE = """import torch

class Child(torch.jit.ScriptModule):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(2, 2)
    @torch.jit.script_method
    def forward(self, x):
        return self.linear(x)

class Net(torch.jit.ScriptModule):
    def __init__(self):
        super().__init__()
        self.child = Child()  # itself a ScriptModule subclass
    @torch.jit.script_method
    def forward(self, x):
        return self.child(x)

calls = []
model = Net()
model.child.register_forward_hook(lambda module, args, output: calls.append(module))
model(torch.ones(1, 2))
assert calls, "the forward hook on model.child registered without error and never ran"
"""

BUG = Bug(
    id="child-hooks-bypassed",
    title="Hooks on a ScriptModule-subclass child never run under a script_method forward",
    upstream="not reported yet",
    apis=APIS,
    scope=scope(NESTED, ("script_method",)),  # a plain forward calls the child's wrapper: its hooks run
    cases=CASES,
    symptom="the child's hooks register without error and never run (eager runs them)",
    recognise=recognise,
    pieces=(_call_impl_runs_global_hooks, _script_method_compiles),
    fingerprinted=((MODULE, "Module._call_impl"), (SCRIPT, "script_method")),
    script="repro/child_hooks_bug.py",
    paste=PASTE,
    explanation=__doc__,
    root_cause=root_cause,
    workaround=Workaround(
        name="a plain forward on the parent",
        summary="a plain Python forward on the parent, so that it calls the child through its wrapper",
        usage="drop @torch.jit.script_method from the parent's forward; full backward hooks on the child "
        "then need repro.workaround.register_full_backward_hook (full-backward-hook-flag)",
        apply=routed("register_full_backward_hook"),
        in_torch_terms=("a plain Python forward on the parent, so that it calls the child through its wrapper"),
        style="plain_forward",
    ),
)
