"""What the bugs' root causes measure on the installed torch: where a piece of its source is, and
small ScriptModule subclasses to look at. Imports torch only when a cause is measured.

Causes in C++ are cited by path and the upstream commit whose file was read (wheels ship no
``.cpp``): ``CALL_METHOD``, ``INTERPRETER_ERROR`` and ``SETATTR_CAST``.
"""

from __future__ import annotations

from typing import Any

from repro.source_checks import installed_torch_root

INTERPRETER = "torch/csrc/jit/runtime/interpreter.cpp at upstream commit 00514998856aba55fe374e32da30d7dc3f96fd53"
SCRIPT_INIT = "torch/csrc/jit/python/script_init.cpp at upstream commit 3f8ce0f96012e5f8991677812b03a0c675252af6"
CALL_METHOD = (
    f"the TorchScript interpreter runs prim::CallMethod as a call of the child's compiled method "
    f"({INTERPRETER}, CodeImpl::emitNodeAtBlockLevel emits it with emitCall), never through the child's "
    "Python Module.__call__, which is what runs hooks"
)
INTERPRETER_ERROR = (
    f"the TorchScript interpreter catches every exception raised inside a compiled method and raises a "
    f"new one, 'The following operation failed in the TorchScript interpreter' ({INTERPRETER}, "
    "InterpreterStateImpl::handleError)"
)
SETATTR_CAST = (
    f"the inner module's C++ setter converts the value to that type with toIValue ({SCRIPT_INIT}, the "
    "ScriptObject setattr and __setattr__ bindings in initJitScriptBindings) and raises "
    "'Could not cast attribute' where it cannot"
)


def line_of(path: str, text: str, after: str = "") -> str:
    """``path:N`` of the first line of the installed torch's ``path`` holding ``text`` (after the first
    line holding ``after``, where given), or ``path`` and why not."""
    try:
        lines = (installed_torch_root() / path).read_text(encoding="utf-8").splitlines()
    except OSError:
        return f"{path} (not readable here)"
    start = next((n for n, line in enumerate(lines) if after in line), 0) if after else 0
    found = next((n for n in range(start, len(lines)) if text in lines[n]), None)
    return f"{path}:{found + 1}" if found is not None else f"{path} (no line holds {text!r})"


def subclass(script_method: bool = True, child: str = "linear") -> Any:
    """An instance of a fresh ScriptModule subclass ``Net`` whose ``forward`` (compiled, or plain
    Python) calls ``self.child``: an ``nn.Linear``, or (``child="subclass"``) a ``Net`` itself."""
    import torch

    def __init__(self: Any) -> None:
        torch.jit.ScriptModule.__init__(self)
        self.child = subclass() if child == "subclass" else torch.nn.Linear(2, 2)

    def forward(self, x):
        return self.child(x)

    body = {"__init__": __init__, "forward": torch.jit.script_method(forward) if script_method else forward}
    return type("Net", (torch.jit.ScriptModule,), body)()


def calls_children_in_torchscript(model: Any) -> bool:
    """Does the compiled ``forward`` call its child with ``prim::CallMethod`` (inside TorchScript)?"""
    return any(node.kind() == "prim::CallMethod" for node in model.forward.graph.nodes())


def first_line(err: BaseException) -> str:
    return f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
