"""``torch.jit.save`` of a ScriptModule subclass with a plain forward saves a module without one.

A subclass whose ``forward`` is a plain Python method (the style torch_npu's tests use) has no
compiled ``forward``: TorchScript compiles only ``@torch.jit.script_method`` methods. ``torch.jit.save``
serialises the compiled module and succeeds without a word; ``torch.jit.load`` then returns a
``RecursiveScriptModule`` that cannot be called ("'RecursiveScriptModule' object has no attribute
'forward'"). The loss shows only in the process that loads the file, possibly another machine.
Eager's way to the same file, ``torch.jit.script(model)`` then ``torch.jit.save``, compiles the
forward. Related upstream: pytorch/pytorch#38214 (saving ScriptModules).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from repro.catalogue import edits
from repro.catalogue.bug import ROOTS, raised_instead, scope
from repro.catalogue.declare import declare
from repro.catalogue.texts import inserted
from repro.source_checks import find
from repro.traits import PLAIN_FORWARD, Traits

if TYPE_CHECKING:  # the engine imports torch; the tracker reads signatures without it
    from repro.engine.oracle import ScenarioResult

NO_FORWARD = "object has no attribute 'forward'"


def root_cause(evidence: list[str]) -> list[str]:
    import io

    import torch

    from repro.catalogue.measure import line_of, subclass

    model = subclass(script_method=False)
    compiled = model._c._has_method("forward")
    buffer = io.BytesIO()
    torch.jit.save(model, buffer)
    buffer.seek(0)
    loaded = torch.jit.load(buffer)
    return [
        "TorchScript compiles only a subclass's @torch.jit.script_method methods "
        f"({line_of('torch/jit/_script.py', 'def script_method')}): measured, the compiled module of a plain "
        f"forward subclass has a forward: {compiled}.",
        f"torch.jit.save writes that compiled module ({line_of('torch/jit/_serialization.py', 'def save')}) "
        "without checking that it can be called.",
        f"torch.jit.load returns a RecursiveScriptModule; measured, it has a forward: {hasattr(loaded, 'forward')}.",
    ]


def recognise(result: ScenarioResult) -> bool:
    """Calling the loaded module raises: the saved module has no forward (also where eager's save
    raised another error first: its torch.jit.script refusing a hook it cannot compile)."""
    return raised_instead(result, NO_FORWARD) and "torch.jit.save" in result.scenario.apis


# --- fixing it: what TorchScript compiles of a class is decided when it is built (C++), so the patch makes
# torch.jit.save refuse a ScriptModule whose forward is a Python method that was never compiled (loud).

SERIALIZATION = "torch/jit/_serialization.py"
REFUSAL = "torch.jit.save would save a module without a forward"
refuse_uncompiled_forward = edits.Insertion(  # torch.jit.save checks the forward it would save
    SERIALIZATION,
    lambda tree: find(tree, ast.FunctionDef, "save"),
    edits.Where.AT_START,
    inserted(__name__, "refuse_uncompiled_forward"),
    missing=f"{SERIALIZATION} has no function save.",
    marker=REFUSAL,
    already="already refuses a module without a compiled forward",
)

SCOPE = scope(ROOTS, ("plain_forward",))


def reach(t: Traits) -> bool:
    """The subclass saved has a plain forward."""
    return t.root == PLAIN_FORWARD


BUG = declare(__name__)
