"""What TorchScript refuses: not bugs, but the report names them, with the torch source line that
refuses each, found in the installed torch at run time (never hard-coded).

A refusal is "by design" only where PyTorch's documentation or an upstream test states it as
intended, and its entry cites that source (``cite``). A clear refusal with no such source is
"refused (undocumented)": neither works nor a bug, and listed apart. A departure upstream tracks as
an open issue is a catalogued bug, not an entry here (``torch.jit.Error`` replacing the user's
exception, pytorch/pytorch#54612)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from repro.source_checks import installed_torch_root

CPP = "torch._C"  # a refusal raised in C++: no Python line decides it
DESIGNED = "by design"  # PyTorch's documentation or an upstream test states it as intended (cited)
UNDOCUMENTED = "undocumented"  # a clear refusal no such source states: neither works nor a bug


@dataclass(frozen=True)
class ByDesign:
    what: str  # the behaviour, as a user meets it
    error: str  # the text of the refusal
    source: str  # the torch file that raises it, as in a wheel
    cite: str = ""  # PyTorch's documentation or upstream test stating it as intended; "" = undocumented
    related: str = ""  # the closest upstream threads

    @property
    def designed(self) -> bool:
        return bool(self.cite)


BY_DESIGN = (
    ByDesign(
        "any nn.Module method a RecursiveScriptModule does not support, called by the user: hooks "
        "on a submodule of a ScriptModule, or on a torch.jit.script(...) result",
        " is not supported on ScriptModules",
        "torch/jit/_script.py",
        related="pytorch/pytorch#34329 (hook support tracking), #29037 (hooks for TorchScript, closed)",
    ),
    ByDesign(
        "torch.func.functional_call on a ScriptModule",
        "The stateless API can't be used with Jitted modules",
        "torch/nn/utils/stateless.py",
        cite="upstream test test/test_stateless.py::TestStatelessFunctionalAPI::test_functional_call_with_jit "
        "(assertRaisesRegex(RuntimeError, 'used with Jitted modules'))",
    ),
    ByDesign(
        "deleting a parameter, buffer or child of a ScriptModule, and what does so: weight_norm, "
        "spectral_norm and parametrizations on a child",
        "cannot delete methods or parameters of a script module",
        "torch/jit/_script.py",
        related="pytorch/pytorch#21275 (weight_norm is not supported in TorchScript)",
    ),
    ByDesign(
        "adding a parameter after construction: pruning a child's weight",
        "Can't add a new parameter after ScriptModule construction",
        "torch/jit/_script.py",
    ),
    ByDesign(
        "replacing an existing child with an eager module (setattr, set_submodule; adding one under a new "
        "name is a catalogued bug)",
        "Cannot re-assign modules in a ScriptModule",
        "torch/jit/_script.py",
        cite="upstream test test/test_jit.py::TestScript::test_script_module_nochange_submodule "
        "(assertRaisesRegex(RuntimeError, 'Cannot re-assign'): m.sub = nn.Linear(5, 5))",
    ),
    ByDesign(
        "torch.export.export of a ScriptModule (torch._export.converter.TS2EPConverter converts one)",
        "Exporting a ScriptModule is not supported",
        "torch/export/__init__.py",
        cite="upstream test test/export/test_export.py::TestExport::test_export_script_module "
        "(assertRaisesRegex(ValueError, 'Exporting a ScriptModule is not supported'))",
    ),
    ByDesign(
        "torch.compile of a torch.jit.script-ed module (the error says to compile the eager module)",
        "torch.compile does not support compiling torch.jit.script",
        "torch/_dynamo/eval_frame.py",
    ),
    ByDesign(
        "a non-persistent buffer",
        "ScriptModule does not support non-persistent buffers",
        "torch/nn/modules/module.py",
        related="pytorch/pytorch#65398 (non-persistent buffers in TorchScript, open)",
    ),
    ByDesign(
        "pickling a ScriptModule (torch.jit.save is its serialisation)",
        "which does not have a __getstate__",
        CPP,
        related="pytorch/pytorch#38214 (ScriptModules cannot be saved using torch.save, closed)",
    ),
)


def _children_compiled(scripted: Any, eager: Any) -> bool:
    """Every class that differs is TorchScript's: a ``RecursiveScriptModule`` child, or a compiled
    method (``ScriptMethod``) where eager has a Python one."""
    scripted, eager = scripted or {}, eager or {}
    differing = [name for name in {*scripted, *eager} if scripted.get(name) != eager.get(name)]
    return bool(differing) and all(scripted.get(name) in COMPILED for name in differing)


COMPILED = ("RecursiveScriptModule", "ScriptMethod")


@dataclass(frozen=True)
class DesignedDifference:
    """A difference in what both twins observed that TorchScript makes on purpose (no refusal), with
    the documentation that says so (``cite``) and the statement that does it, found at run time."""

    what: str
    key: str  # the observation that differs
    holds: Callable[[Any, Any], bool]  # (ScriptModule's value, eager's value): is this the designed difference?
    marker: str  # the statement that decides it, as it stands in ``source``
    source: str
    cite: str  # PyTorch's documentation or upstream test that states it as intended


DESIGNED_DIFFERENCES = (
    DesignedDifference(
        "the children of a ScriptModule subclass are RecursiveScriptModules, not their own classes "
        "(isinstance(m.child, nn.Linear) is False; hooks receive the compiled child), and a script_method "
        "forward is a ScriptMethod (torch.jit.ScriptModule's documentation: 'in ScriptModules methods are "
        "implemented as TorchScript functions')",
        "types",
        _children_compiled,
        "modules[name] = wrap_cpp_module(cpp_module)",
        "torch/jit/_script.py",
        "torch.jit.script's documentation: 'Scripting an nn.Module by default will compile the forward "
        "method and recursively compile any methods, submodules, and functions called by forward' "
        "(https://docs.pytorch.org/docs/stable/generated/torch.jit.script.html); upstream test "
        "test/test_jit.py::test_module_copying (isinstance(strong_mod.weak, torch.jit.ScriptModule)); "
        "pytorch/pytorch#19348 (isinstance(m, nn.Linear) returns False in ScriptModules, closed)",
    ),
)


def designed_difference(scripted: dict, eager: dict) -> str | None:
    """``file:line`` deciding a difference TorchScript makes on purpose, when that is the only one."""
    for entry in DESIGNED_DIFFERENCES:
        others_equal = {k: v for k, v in scripted.items() if k != entry.key} == {
            k: v for k, v in eager.items() if k != entry.key
        }
        if others_equal and entry.holds(scripted.get(entry.key), eager.get(entry.key)):
            return f"{DESIGNED}: {line_of(entry.source, entry.marker)}"
    return None


@functools.cache
def line_of(source: str, marker: str) -> str:
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
        return f"{label(by_message)}: {refusal_line(by_message)}"
    name = next((api for api in apis if error and f"{api} is not supported on ScriptModules" in error), None)
    stub = getattr(torch.jit.RecursiveScriptModule, name, None) if name else None
    if stub is None or "_make_fail" not in stub.__qualname__:
        return None
    line = f"{_relative(inspect.getsourcefile(stub))}:{inspect.getsourcelines(stub)[1] + 1}"
    return f"{label(BY_DESIGN[0])}: {line}"


def label(entry: ByDesign) -> str:
    """How the report names a refusal: by design (a source says so) or undocumented."""
    return DESIGNED if entry.designed else UNDOCUMENTED


def _relative(path: str | None) -> str:
    """``.../site-packages/torch/jit/_script.py`` -> ``torch/jit/_script.py``."""
    parts = Path(path or "?").parts
    return "/".join(parts[parts.index("torch") :]) if "torch" in parts else str(path)
