"""Import chosen torch modules from other source files: how a patched torch is run in memory.

A meta-path finder serves e.g. ``torch.jit._script`` from ``DIR/torch/jit/_script.py``;
every other module comes from the installed torch. It must be installed before torch is
imported, so it lives in the process that runs the candidate (never in site-packages).
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from importlib.machinery import ModuleSpec
from pathlib import Path


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, files: dict[str, Path]) -> None:
        self.files = files

    def find_spec(self, name: str, path=None, target=None) -> ModuleSpec | None:
        file = self.files.get(name)
        return importlib.util.spec_from_file_location(name, file) if file else None


def import_from(directory: Path) -> list[str]:
    """Serve every ``torch/**/*.py`` under ``directory`` in place of the installed module."""
    if "torch" in sys.modules:
        raise RuntimeError("patched sources must be installed before torch is imported")
    files = {
        ".".join(path.relative_to(directory).with_suffix("").parts): path
        for path in directory.glob("torch/**/*.py")
    }
    sys.meta_path.insert(0, _Finder(files))
    return sorted(files)
