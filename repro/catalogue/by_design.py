"""What TorchScript refuses on purpose: not bugs, but the report names them, with the torch
source line that refuses each, found in the installed torch at run time (never hard-coded)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from repro.source_checks import installed_torch_root

CPP = "torch._C"  # a refusal raised in C++: no Python line decides it


@dataclass(frozen=True)
class ByDesign:
    what: str  # the behaviour, as a user meets it
    error: str  # the text of the refusal
    source: str  # the torch file that raises it, as in a wheel


BY_DESIGN = (
    ByDesign(
        "any nn.Module method a RecursiveScriptModule does not support, called by the user: hooks "
        "on a submodule of a ScriptModule, or on a torch.jit.script(...) result",
        " is not supported on ScriptModules",
        "torch/jit/_script.py",
    ),
    ByDesign(
        "torch.func.functional_call on a ScriptModule",
        "The stateless API can't be used with Jitted modules",
        "torch/nn/utils/stateless.py",
    ),
    ByDesign(
        "deleting a parameter, buffer or child of a ScriptModule, and what does so: weight_norm, "
        "spectral_norm and parametrizations on a child",
        "cannot delete methods or parameters of a script module",
        "torch/jit/_script.py",
    ),
    ByDesign(
        "adding a parameter after construction: pruning a child's weight",
        "Can't add a new parameter after ScriptModule construction",
        "torch/jit/_script.py",
    ),
    ByDesign(
        "replacing or adding a child with an eager module (setattr, add_module, register_module, set_submodule)",
        "Cannot re-assign modules in a ScriptModule",
        "torch/jit/_script.py",
    ),
    ByDesign(
        "a non-persistent buffer", "ScriptModule does not support non-persistent buffers", "torch/nn/modules/module.py"
    ),
    ByDesign(
        "register_buffer after construction (the message blames __init__: the wrapper has no _buffers)",
        "cannot assign buffer before Module.__init__() call",
        "torch/nn/modules/module.py",
    ),
    ByDesign(
        "register_parameter after construction (the message blames __init__: the wrapper has no _parameters)",
        "cannot assign parameter before Module.__init__() call",
        "torch/nn/modules/module.py",
    ),
    ByDesign(
        "pickling a ScriptModule (torch.jit.save is its serialisation)", "which does not have a __getstate__", CPP
    ),
)


@dataclass(frozen=True)
class DesignedDifference:
    """A difference in what both twins observed that TorchScript makes on purpose (no refusal)."""

    what: str
    key: str  # the observation that differs
    script: str  # its value on the ScriptModule side
    marker: str  # the statement that decides it, as it stands in ``source``
    source: str


DESIGNED_DIFFERENCES = (
    DesignedDifference(
        "an exception raised inside a compiled forward reaches the caller as torch.jit.Error "
        "(TorchScript's documented exception), not as its own class",
        "the caller catches",
        "Error",
        "Error = torch._C.JITException",
        "torch/jit/__init__.py",
    ),
)


def designed_difference(script: dict, eager: dict) -> str | None:
    """``file:line`` deciding a difference TorchScript makes on purpose, when that is the only one."""
    for entry in DESIGNED_DIFFERENCES:
        others_equal = {k: v for k, v in script.items() if k != entry.key} == {
            k: v for k, v in eager.items() if k != entry.key
        }
        if others_equal and script.get(entry.key) == entry.script != eager.get(entry.key):
            return _line_of(entry.source, entry.marker)
    return None


@functools.cache
def _line_of(source: str, marker: str) -> str:
    try:
        lines = (installed_torch_root() / source).read_text(encoding="utf-8").splitlines()
    except OSError:
        return f"{source}: not in this torch"
    number = next((i for i, line in enumerate(lines, 1) if line.strip() == marker), None)
    return f"{source}:{number}" if number else f"{source}: no longer decided there"


def refusal_by_message(error: str | None) -> ByDesign | None:
    """The by-design entry whose refusal text ``error`` carries (not the stubs: ``refusal`` checks those)."""
    return next((entry for entry in BY_DESIGN[1:] if error and entry.error in error), None)


@functools.cache  # a --slow run meets a refusal about 90 times: each torch file is read once
def refusal_line(entry: ByDesign, root: Path | None = None) -> str:
    """``file:line`` of the statement that raises ``entry.error`` in the installed torch, or why not found."""
    if entry.source == CPP:
        return f"{CPP}, raised in C++"
    path = (root or installed_torch_root()) / entry.source
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return f"{entry.source}: not in this torch"
    raising = (_raise_above(lines, i) for i, line in enumerate(lines) if entry.error in line)
    number = next((n for n in raising if n), None)
    return f"{entry.source}:{number}" if number else f"{entry.source}: the refusal is no longer there"


def _raise_above(lines: list[str], index: int, reach: int = 3) -> int | None:
    """The 1-based number of the ``raise`` line whose message is on line ``index`` (0-based): that line
    itself, or one of the ``reach`` lines above it (a message wrapped onto its own line)."""
    return next((j + 1 for j in range(index, max(-1, index - reach - 1), -1) if "raise" in lines[j]), None)


def refusal(apis: set[str], error: str | None) -> str | None:
    """``file:line`` of the stub that refused a method the user called directly, or None.

    RecursiveScriptModule replaces every ``nn.Module`` method it does not support with a stub made
    by ``_make_fail`` that raises "<name> is not supported on ScriptModules". Whether a method is
    such a stub is read from the running torch, not assumed; a refusal of a method the user did not
    call (``_get_backward_hooks`` from inside ``Module._call_impl``) is not by design: it is a bug."""
    import inspect

    import torch

    by_message = refusal_by_message(error)
    if by_message:
        return refusal_line(by_message)
    name = next((api for api in apis if error and f"{api} is not supported on ScriptModules" in error), None)
    stub = getattr(torch.jit.RecursiveScriptModule, name, None) if name else None
    if stub is None or "_make_fail" not in stub.__qualname__:
        return None
    return f"{_relative(inspect.getsourcefile(stub))}:{inspect.getsourcelines(stub)[1] + 1}"


def _relative(path: str | None) -> str:
    """``.../site-packages/torch/jit/_script.py`` -> ``torch/jit/_script.py``."""
    parts = Path(path or "?").parts
    return "/".join(parts[parts.index("torch") :]) if "torch" in parts else str(path)
