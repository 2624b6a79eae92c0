"""Import chosen torch modules from other source files: how a patched torch is run in memory.

A meta-path finder serves e.g. ``torch.jit._script`` from ``DIR/torch/jit/_script.py``;
every other module comes from the installed torch. It must be installed before torch is
imported, so it lives in the process that runs the candidate (never in site-packages).
Only files that replace an installed module and differ from it are served: a whole copy of
torch's sources would otherwise move modules that locate torch's binaries next to themselves.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from importlib.machinery import ModuleSpec
from pathlib import Path

from repro.source_checks import installed_torch_root


class NothingToOverlay(ValueError):
    """The folder holds no torch source file that differs from the installed torch (one sentence)."""


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, files: dict[str, Path]) -> None:
        self.files = files

    def find_spec(self, name: str, path=None, target=None) -> ModuleSpec | None:
        file = self.files.get(name)
        return importlib.util.spec_from_file_location(name, file) if file else None


def overlay_files(directory: Path) -> dict[str, Path]:
    """Module name -> file for each ``torch/**/*.py`` under ``directory`` that replaces an
    installed module (not a package ``__init__``) and differs from it."""
    installed = installed_torch_root()
    files = {}
    for path in sorted(directory.glob("torch/**/*.py")):
        relative = path.relative_to(directory)
        original = installed / relative
        if relative.name == "__init__.py" or not original.is_file():
            continue
        if path.read_bytes() != original.read_bytes():
            files[".".join(relative.with_suffix("").parts)] = path
    if not files:
        raise NothingToOverlay(
            f"{directory} holds no torch/**/*.py that differs from the installed torch "
            f"(expected e.g. {directory / 'torch' / 'jit' / '_script.py'}), so nothing would be patched")
    return files


def import_from(directory: Path) -> list[str]:
    """Serve the files ``overlay_files`` finds in place of the installed modules; return their paths."""
    if "torch" in sys.modules:
        raise RuntimeError("patched sources must be installed before torch is imported")
    files = overlay_files(directory)
    sys.meta_path.insert(0, _Finder(files))
    return [str(path.relative_to(directory)) for path in files.values()]
