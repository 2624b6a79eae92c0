"""``torch.export.export`` of an eager model holding a ScriptModule crashes inside its tracer.

Exporting a ScriptModule itself is refused on purpose, with a clear message and a pointer to
``TS2EPConverter`` (upstream's test/export/test_export.py::test_export_script_module). A ScriptModule
one level down, as the child of an eager model, meets no such check. Non-strict export (the
default) traces with ``_ModuleStackTracer``, whose ``AttrProxy`` stands in for each submodule by
subclassing its class and sharing its ``__dict__``. For a ScriptModule that proxy calls the Python
``forward`` of the scripted class with the wrong ``self``, or the ``ScriptMethod`` as ``self``, and
the user gets "'ScriptMethod' object has no attribute 'weight'" or "forward() takes 2 positional
arguments but 3 were given": nothing that names TorchScript. Strict export refuses, in dynamo's words.
Related upstream: pytorch/pytorch#137455 (non-strict export's attribute proxies break a submodule).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from repro.catalogue import edits
from repro.catalogue.bug import raised, scope
from repro.catalogue.declare import declare
from repro.catalogue.texts import inserted
from repro.traits import EAGER, Traits

if TYPE_CHECKING:  # the engine imports torch; the tracker reads signatures without it
    from repro.engine.oracle import ScenarioResult

CRASHES = ("'torch._C.ScriptMethod' object has no attribute", "positional arguments but 3 were given")


def root_cause(evidence: list[str]) -> list[str]:
    import torch

    from repro.catalogue.measure import line_of

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = torch.jit.script(torch.nn.Linear(2, 2))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.inner(x)

    try:
        torch.export.export(Net(), (torch.ones(1, 2),))
        measured = "export succeeded"
    except Exception as err:  # the crash is the measurement
        measured = f"export raised {type(err).__name__}: {str(err).splitlines()[0][:120]}"
    return [
        "torch.export.export refuses a ScriptModule passed to it "
        f"({line_of('torch/export/__init__.py', 'Exporting a ScriptModule is not supported')}), "
        "but checks only the module it is given.",
        "Non-strict export traces submodule calls through AttrProxy, which subclasses each submodule's "
        f"class and shares its __dict__ ({line_of('torch/fx/experimental/proxy_tensor.py', 'class AttrProxy')}).",
        f"For a scripted child that proxy calls the wrong forward: measured, {measured}.",
    ]


def recognise(result: ScenarioResult) -> bool:
    """Export raised one of the tracer's crashes, not the refusal export gives a ScriptModule."""
    return "torch.export.export" in result.scenario.apis and raised(result, *CRASHES)


# --- fixing it: no Python change makes the tracer run TorchScript, so the patch makes export refuse a model
# holding a ScriptModule whose forward is compiled, as it refuses one passed to it, before tracing starts
# (loud). A ScriptModule subclass with a plain Python forward and no compiled child exports today: kept.

EXPORT = "torch/export/__init__.py"
ROOT_CHECK = "isinstance(mod, torch.jit.ScriptModule)"
REFUSAL = "holds a ScriptModule"
refuse_scripted_submodules = edits.Insertion(  # after export's check of the module it is given
    EXPORT,
    lambda tree: edits.statement(tree, edits.if_testing(ROOT_CHECK)),
    edits.Where.AFTER,
    inserted(__name__, "refuse_scripted_submodules"),
    missing=f"{EXPORT}: export has no 'if {ROOT_CHECK}:' check to extend.",
    marker=REFUSAL,
    already=f"already refuses a module that {REFUSAL}",
)

SCOPE = (
    scope(("in eager parent",), ("script_method",))
    + scope(("in eager parent, with child",))
    + scope(("scripted child",), ("torch.jit.script",))
)


def reach(t: Traits) -> bool:
    """An eager model exported, holding compiled code."""
    return t.root == EAGER and t.compiled


BUG = declare(__name__)
