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
from repro.catalogue.bug import Bug, Departure, Workaround, raised, scope
from repro.catalogue.fixes import Fixes, PatchError, Sources, UpstreamPatch, regression_test
from repro.catalogue.texts import rendered

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


PASTE = rendered(__name__, "paste.py")  # paste.py beside this file, as users paste it

# --- fixing it: no Python change makes the tracer run TorchScript, so the patch makes export refuse a model
# holding a ScriptModule whose forward is compiled, as it refuses one passed to it, before tracing starts
# (loud). A ScriptModule subclass with a plain Python forward and no compiled child exports today: kept.

EXPORT = "torch/export/__init__.py"
ROOT_CHECK = "isinstance(mod, torch.jit.ScriptModule)"
REFUSAL = "holds a ScriptModule"
GUARD = [
    "scripted = [",
    "    name",
    "    for name, sub in mod.named_modules()",
    '    if isinstance(sub, torch.jit.ScriptModule) and sub._c._has_method("forward")',
    "]",
    "if scripted:",
    "    raise ValueError(",
    f'        f"Exporting a module that {REFUSAL} ({{scripted[0]!r}}) is not supported: "',
    '        "export traces Python code, and that forward is TorchScript. "',
    '        "Export the eager version of that submodule instead."',
    "    )",
]


def refuse_scripted_submodules(sources: Sources) -> dict[str, str]:
    """``export`` checks every submodule, after its check of the module it is given."""
    text = edits.source(sources, EXPORT)
    check = edits.statement(edits.parse(EXPORT, text), edits.if_testing(ROOT_CHECK))
    if check is None:
        raise PatchError(f"{EXPORT}: export has no 'if {ROOT_CHECK}:' check to extend.")
    edits.unpatched(EXPORT, text, REFUSAL, f"already refuses a module that {REFUSAL}")
    return {EXPORT: edits.after(text, check, GUARD)}


FIXES = Fixes(
    patch=UpstreamPatch(
        summary="torch.export.export refuses a model holding a compiled ScriptModule, as it refuses one passed to it",
        files=(EXPORT,),
        edit=refuse_scripted_submodules,
        test=regression_test(__name__, "test/export/test_export_scripted_submodule.py"),
        refusal=REFUSAL,
        cpp="torch/csrc/jit/api/module.h: a ScriptModule's forward is a C++ torch::jit::Method that "
        "export's Python tracer cannot enter",
    ),
)

BUG = Bug(
    id="export-scripted-child-crashes",
    number=17,
    headline="exporting a model with a ScriptModule child crashes",
    title="torch.export.export of an eager model with a ScriptModule child crashes in its tracer",
    upstream="not reported yet (related: pytorch/pytorch#137455)",
    apis=("torch.export.export",),
    scope=scope(("in eager parent",), ("script_method",))
    + scope(("in eager parent, with child",))
    + scope(("scripted child",), ("torch.jit.script",)),
    symptom="AttributeError ('ScriptMethod' object has no attribute) or TypeError (3 arguments given)",
    departures=(
        Departure(
            "torch.export.export: exports the forward; the exported program computes the same output",
            "torch.jit.script",
            "raises",
            detail="TypeError: Flat.forward() takes 2 positional arguments but 3 were given",
            model="scripted child",
        ),
    ),
    recognise=recognise,
    paste_ends="AssertionError: export crashed in its tracer",
    paste=PASTE,
    explanation=__doc__,
    needs=("torch.export.export",),
    no_static="the proxy's wrong forward is decided by the classes at trace time, not by one line",
    root_cause=root_cause,
    fixes=FIXES,
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
