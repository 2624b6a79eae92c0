"""What TorchScript refuses on purpose: not bugs, but the report names them, with the torch
source line that refuses each, found in the installed torch at run time (never hard-coded)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from repro.source_checks import installed_torch_root


@dataclass(frozen=True)
class ByDesign:
    what: str  # the behaviour, as a user meets it
    error: str  # the text of the refusal
    source: str  # the torch file that raises it, as in a wheel


BY_DESIGN = (
    ByDesign("any nn.Module method a RecursiveScriptModule does not support, called by the user: hooks "
             "on a submodule of a ScriptModule, or on a torch.jit.script(...) result",
             " is not supported on ScriptModules", "torch/jit/_script.py"),
    ByDesign("torch.func.functional_call on a ScriptModule", "The stateless API can't be used with Jitted modules",
             "torch/nn/utils/stateless.py"),
    ByDesign("torch.nn.utils.weight_norm on a scripted submodule (it deletes a parameter)",
             "cannot delete methods or parameters of a script module", "torch/jit/_script.py"),
)


def refusal_line(entry: ByDesign, root: Path | None = None) -> str:
    """``file:line`` of the statement that raises ``entry.error`` in the installed torch, or why not found."""
    path = (root or installed_torch_root()) / entry.source
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return f"{entry.source}: not in this torch"
    number = next((i for i, line in enumerate(lines, 1) if entry.error in line and "raise" in line), None)
    return f"{entry.source}:{number}" if number else f"{entry.source}: the refusal is no longer there"


def refusal(apis: set[str], error: str | None) -> str | None:
    """``file:line`` of the stub that refused a method the user called directly, or None.

    RecursiveScriptModule replaces every ``nn.Module`` method it does not support with a stub made
    by ``_make_fail`` that raises "<name> is not supported on ScriptModules". Whether a method is
    such a stub is read from the running torch, not assumed; a refusal of a method the user did not
    call (``_get_backward_hooks`` from inside ``Module._call_impl``) is not by design: it is a bug."""
    import inspect

    import torch

    name = next((api for api in apis if error and f"{api} is not supported on ScriptModules" in error), None)
    stub = getattr(torch.jit.RecursiveScriptModule, name, None) if name else None
    if stub is None or "_make_fail" not in stub.__qualname__:
        return None
    return f"{_relative(inspect.getsourcefile(stub))}:{inspect.getsourcelines(stub)[1] + 1}"


def _relative(path: str | None) -> str:
    """``.../site-packages/torch/jit/_script.py`` -> ``torch/jit/_script.py``."""
    parts = Path(path or "?").parts
    return "/".join(parts[parts.index("torch"):]) if "torch" in parts else str(path)
