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

from repro.catalogue.bug import Bug, Workaround, raised, scope

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


PASTE = """import torch

class Inner(torch.jit.ScriptModule):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(2, 2)

    def forward(self, x):
        return self.linear(x)

class Net(torch.nn.Module):  # an eager model holding it, as users export them
    def __init__(self):
        super().__init__()
        self.inner = Inner()

    def forward(self, x):
        return self.inner(x)

try:
    torch.export.export(Net(), (torch.ones(1, 2),))
except (AttributeError, TypeError) as err:  # a ScriptModule root gets a clear ValueError instead
    raise AssertionError(f"export crashed in its tracer: {err}") from None  # its stack is 80 frames
"""

BUG = Bug(
    id="export-scripted-child-crashes",
    title="torch.export.export of an eager model with a ScriptModule child crashes in its tracer",
    upstream="not reported yet (related: pytorch/pytorch#137455)",
    apis=("torch.export.export",),
    scope=scope(("in eager parent",), ("script_method",))
    + scope(("in eager parent, with child",))
    + scope(("scripted child",), ("torch.jit.script",)),
    symptom="AttributeError ('ScriptMethod' object has no attribute) or TypeError (3 arguments given)",
    recognise=recognise,
    script="repro/export_bug.py",
    paste=PASTE,
    explanation=__doc__,
    needs=("torch.export.export",),
    no_static="the proxy's wrong forward is decided by the classes at trace time, not by one line",
    root_cause=root_cause,
    workaround=Workaround(
        name="none",
        summary="none: export the eager model before any part of it is scripted",
        usage="keep an eager twin of the model for torch.export.export; script only for TorchScript",
        apply=None,
        in_torch_terms="none: export an eager model without ScriptModule children",
        tried=(
            "torch.export.export(..., strict=True): refused by dynamo ('torch.jit.script/freeze modules "
            "unsupported', or 'Attempted to inline function marked as skipped' for a subclass)",
        ),
    ),
)
