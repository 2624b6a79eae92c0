"""An exception raised inside a compiled forward reaches the caller as ``torch.jit.Error``.

A ``script_method`` forward runs in the TorchScript interpreter. When TorchScript code raises
(``raise ValueError(...)``), the interpreter does not rethrow the user's exception: the caller gets
``torch.jit.Error`` (``torch._C.JITException``, a ``RuntimeError``) whose message holds the
original text. Code that catches ``ValueError`` around the model, as it does around the eager
model, misses it. With a plain ``forward`` the Python code raises the user's own class. Upstream
tracks the loss as an open problem: pytorch/pytorch#54612 ("Exceptions thrown in JIT interpreter
always are translated into RuntimeError"); PR #77093 tried to rethrow the original class and was
closed. The cause is in C++ (the interpreter's exception handling), which wheels do not ship as
edits.source, so the bug has no static signature.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from repro.catalogue import edits
from repro.catalogue.bug import scope
from repro.catalogue.declare import declare
from repro.catalogue.texts import inserted
from repro.source_checks import SCRIPT_PY
from repro.traits import Traits
from repro.vocabulary import Verdict

if TYPE_CHECKING:  # the engine imports torch; the tracker reads signatures without it
    from repro.engine.oracle import ScenarioResult

CAUGHT = "the caller catches"
ERROR = "Error = torch._C.JITException"


def root_cause(evidence: list[str]) -> list[str]:
    import torch

    from repro.catalogue.measure import INTERPRETER, line_of

    class Net(torch.jit.ScriptModule):
        @torch.jit.script_method
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            if bool(x.sum() < 0):
                raise ValueError("negative input")
            return x

    try:
        Net()(-torch.ones(1))
        caught = "nothing: it did not raise"
    except Exception as err:  # what the caller gets is the measurement
        caught = f"{type(err).__module__}.{type(err).__qualname__}"
    return [
        "A script_method forward runs in the TorchScript interpreter; `raise ValueError(...)` there becomes "
        "a prim::RaiseException of the exception's class name and message.",
        f"The interpreter raises it as torch.jit.Error ({line_of('torch/jit/__init__.py', ERROR)}), "
        f"a RuntimeError, with the original class only in its text ({INTERPRETER}, "
        "InterpreterStateImpl::handleError): measured, the caller catches " + caught + ".",
        "Upstream tracks this as open: pytorch/pytorch#54612; PR #77093, which would rethrow the original "
        "class, was closed.",
    ]


def recognise(result: ScenarioResult) -> bool:
    """Both ran; the caller caught ``Error`` from the ScriptModule and another class from eager."""
    scripted = result.scripted.observation.get(CAUGHT) if result.scripted else None
    eager = result.eager.observation.get(CAUGHT) if result.eager else None
    return result.verdict == Verdict.DIFFERS and scripted == "Error" and eager not in (None, "Error")


# --- fixing it: the interpreter already keeps the class and message compiled code raised
# (torch._C._get_caught_jit_exception_class_name / _original_msg, set as torch.jit.Error is raised);
# ScriptModule.__call__ raises that class again, where Python can name it, with the interpreter's
# error as its cause.

raise_the_original_class = edits.MethodAddition(
    SCRIPT_PY, "ScriptModule", "__setattr__", inserted(__name__, "ScriptModule.__call__")
)

SCOPE = scope(("raising",), ("script_method",))


def reach(t: Traits) -> bool:
    """A compiled forward that raises."""
    return t.raises_compiled


BUG = declare(__name__)
