"""``Module.compile()`` on a ScriptModule subclass silently compiles nothing.

``Module.compile`` assigns ``self._compiled_call_impl = torch.compile(self._call_impl, ...)``.
``ScriptModule.__setattr__`` forwards that assignment to the inner ``RecursiveScriptModule``
(the mechanism of ``full-backward-hook-flag``), so the wrapper, whose ``__call__`` reads the
attribute, keeps reading None: no error, and later calls never go through ``torch.compile``.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from repro.catalogue.bug import ROOTS, Bug, Workaround, calls, paste_script, routed, scope
from repro.source_checks import MODULE, SCRIPT, Trees, assigns, method, setattr_forwards
from repro.vocabulary import Verdict

if TYPE_CHECKING:  # the engine imports torch; the tracker reads signatures without it
    from repro.engine.oracle import ScenarioResult

ATTRIBUTE = "_compiled_call_impl"
MARK = ["torch.compile backend"]


def recognise(result: ScenarioResult) -> bool:
    return result.verdict == Verdict.DIFFERS and MARK in calls(result.eager) and MARK not in calls(result.script)


def applies(trees: Trees) -> str | None:
    if method(trees[MODULE], "Module", "compile") is None:
        return f"{MODULE}: Module.compile not found (added in torch 2.2)"
    return None


def _compile_assigns(trees: Trees) -> tuple[bool, str]:
    compile_method = method(trees[MODULE], "Module", "compile")
    if compile_method is None:
        return False, f"{MODULE}: Module.compile not found"
    for node in ast.walk(compile_method):
        if assigns(node, lambda t: isinstance(t, ast.Attribute) and t.attr == ATTRIBUTE):
            return True, f"{MODULE}:{node.lineno}: Module.compile assigns self.{ATTRIBUTE} = ..."
    return False, f"{MODULE}:{compile_method.lineno}: Module.compile no longer assigns self.{ATTRIBUTE}"


def root_cause(evidence: list[str]) -> list[str]:
    from repro.catalogue.measure import line_of, subclass

    model = subclass()
    model._compiled_call_impl = print  # what Module.compile assigns, without loading dynamo
    wrapper, inner = model.__dict__.get(ATTRIBUTE), model._actual_script_module.__dict__.get(ATTRIBUTE)
    return [
        f"Module.compile assigns torch.compile's result to self.{ATTRIBUTE} ({evidence[0]}).",
        f"ScriptModule.__setattr__ forwards the assignment to the inner RecursiveScriptModule ({evidence[1]}); "
        f"measured, after assigning, the wrapper reads {wrapper!r} and the inner module holds {inner!r}.",
        f"The wrapper's __call__ reads its own {ATTRIBUTE} "
        f"({line_of(MODULE, 'if self._compiled_call_impl is not None', after='def _wrapped_call_impl')}): "
        "None, so every call runs uncompiled, without an error.",
    ]


PASTE = paste_script(
    "import torch",
    """\
graphs = []
model = Net()
model.compile(backend=lambda graph_module, inputs: graphs.append(graph_module) or graph_module.forward)
model(torch.ones(1, 2))
assert graphs, "Module.compile() had no effect: the call never went through torch.compile"
""",
)

BUG = Bug(
    id="module-compile-noop",
    title="Module.compile() on a ScriptModule subclass compiles nothing",
    upstream="not reported yet",
    apis=("compile",),
    scope=scope(tuple(shape for shape in ROOTS if shape != "raising")),  # raising's forward breaks the graph
    symptom="no error, but later calls never go through torch.compile (the wrapper reads None)",
    recognise=recognise,
    pieces=(_compile_assigns, setattr_forwards(ATTRIBUTE)),
    fingerprinted=((MODULE, "Module.compile"), (SCRIPT, "ScriptModule.__setattr__")),
    applies=applies,
    script="repro/module_compile_bug.py",
    paste=PASTE,
    explanation=__doc__,
    needs=("torch.nn.Module.compile",),
    root_cause=root_cause,
    workaround=Workaround(
        name="repro.workaround.compile",
        summary="repro.workaround.compile(model, ...) in place of model.compile(...), on a plain Python forward",
        usage="drop @torch.jit.script_method from forward, then repro.workaround.compile(model, backend=...)",
        apply=routed("compile"),
        in_torch_terms=(
            "a plain Python forward, and object.__setattr__(model, '_compiled_call_impl', "
            "torch.compile(model._call_impl, ...)) in place of model.compile(...)"
        ),
        style="plain_forward",
        tried=(
            "repro.workaround.compile on a script_method forward: the call goes through torch.compile, "
            "but dynamo cannot look into the compiled forward and the backend is never called",
            "torch.compile(model) on a script_method forward: the backend is never called (0 graphs)",
        ),
    ),
)
