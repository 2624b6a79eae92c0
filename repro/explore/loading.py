"""A generated model's text made importable: TorchScript reads a forward's source with ``inspect``, so
an ``exec``'d text cannot be compiled; written to a file and imported, it can."""

from __future__ import annotations

import importlib.util
import itertools
import sys
import tempfile
from pathlib import Path
from types import ModuleType

_FOLDER: list[Path] = []
_COUNT = itertools.count()


def use(path: Path) -> None:
    """Generated modules go to ``path`` from now on (an exploration's folder, removed when it ends)."""
    _FOLDER[:] = [path]


def release() -> None:
    """The exploration's folder removed; later modules go to a new one (a second exploration, or a
    case run outside one, in the same process)."""
    import shutil

    if _FOLDER:
        shutil.rmtree(_FOLDER.pop(), ignore_errors=True)


def folder() -> Path:
    """Where generated modules are written: the exploration's folder, else one made for this process
    (each file is deleted when its case ends; the empty folder stays in the temporary directory)."""
    if not _FOLDER:
        _FOLDER.append(Path(tempfile.mkdtemp(prefix="repro-explore-")))
    return _FOLDER[0]


def loaded(text: str, stem: str) -> ModuleType:
    """``text`` written to a new file and imported under a name no other case uses, so that every case
    gets fresh classes (a first instance is the first of its class)."""
    name = f"repro_explored_{stem}_{next(_COUNT)}"
    path = folder() / f"{name}.py"
    path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None  # a .py path always has a source loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def forget(module: ModuleType) -> None:
    """The module and its file gone (TorchScript keeps the classes it compiled: a worker is replaced
    every few cases for that)."""
    sys.modules.pop(module.__name__, None)
    Path(module.__file__ or "").unlink(missing_ok=True)
