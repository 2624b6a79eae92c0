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
import linecache
import os
import stat
import sys
from importlib.machinery import ModuleSpec
from pathlib import Path

from repro.source_checks import installed_torch_root


class NothingToOverlay(ValueError):
    """The folder holds no torch source file that differs from the installed torch (one sentence)."""


class UnusableSource(ValueError):
    """A ``torch/**/*.py`` under the folder that is not a regular file (a directory, a dangling link, a
    FIFO or a device) or cannot be read (one sentence naming each)."""


class _Loader(importlib.abc.SourceLoader):
    """Compiles the patched text under the installed file's name: torch's own rules that go by a code
    object's file (dynamo's skip and inline rules, for one) treat the module as torch's, and tracebacks and
    ``inspect`` read the patched lines (they are put in ``linecache``)."""

    def __init__(self, patched: Path, installed: Path) -> None:
        self.patched, self.installed = patched, installed

    def get_filename(self, fullname: str) -> str:
        return str(self.installed)

    def get_data(self, path: str) -> bytes:
        if path != str(self.installed):
            raise OSError(f"{path} is not served")  # no bytecode cache: always compiled from the patched text
        data = self.patched.read_bytes()
        lines = importlib.util.decode_source(data).splitlines(keepends=True)  # its coding line honoured
        linecache.cache[path] = (len(data), None, lines, path)  # no mtime: never reloaded from disk
        return data


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, files: dict[str, Path]) -> None:
        self.files = files

    def find_spec(self, name: str, path: object = None, target: object = None) -> ModuleSpec | None:
        file = self.files.get(name)
        if file is None:
            return None
        installed = installed_torch_root().joinpath(*name.split("."))
        package = installed.is_dir()
        origin = installed / "__init__.py" if package else installed.with_suffix(".py")
        return importlib.util.spec_from_file_location(
            name,
            origin,
            loader=_Loader(file, origin),
            submodule_search_locations=[str(installed)] if package else None,  # its submodules: installed ones
        )


def overlay_files(directory: Path) -> dict[str, Path]:
    """Module name -> file for each ``torch/**/*.py`` under ``directory`` that replaces an
    installed module (a package's ``__init__`` too, but torch's own) and differs from it. Symbolic links are followed,
    to files and folders alike (a ``torch/jit`` linked to a folder of patched files included); a
    ``*.py`` that does not resolve to a regular file is ``UnusableSource``, found with ``os.stat``
    before anything is opened (a FIFO is never read)."""
    installed = installed_torch_root()
    files, unusable, unreadable = {}, [], []
    for path in _candidates(directory):
        kind = _not_regular(path)
        if kind:
            unusable.append(f"{path} is {kind}")
            continue
        relative = path.relative_to(directory)
        original = installed / relative
        if relative.parts == ("torch", "__init__.py") or not original.is_file():
            continue  # torch's own __init__ finds its libraries next to itself
        try:
            differs = path.read_bytes() != original.read_bytes()
        except OSError as err:
            unreadable.append(f"{path} cannot be read ({err.strerror or err})")
            continue
        if differs:
            parts = relative.parent.parts if relative.name == "__init__.py" else relative.with_suffix("").parts
            files[".".join(parts)] = path
    problems = [f"{'; '.join(unusable)}: not a regular file"] if unusable else []
    problems += unreadable
    if problems:
        raise UnusableSource(f"{'; '.join(problems)}, so it cannot stand in for torch's")
    if not files:
        raise NothingToOverlay(
            f"{directory} holds no torch/**/*.py that differs from the installed torch "
            f"(expected e.g. {directory / 'torch' / 'jit' / '_script.py'}), so nothing would be patched"
        )
    return files


def _candidates(directory: Path) -> list[Path]:
    """Every ``*.py`` entry under ``directory/torch``, symbolic links to folders followed (each real folder once)."""
    found, seen = [], set()
    for root, folders, names in os.walk(directory / "torch", followlinks=True):
        real = os.path.realpath(root)
        if real in seen:  # a link back up the tree
            folders[:] = []
            continue
        seen.add(real)
        found += [Path(root) / name for name in [*folders, *names] if name.endswith(".py")]
        folders[:] = [f for f in folders if not f.endswith(".py")]  # a folder named like a file: named above
    return sorted(found)


def _not_regular(path: Path) -> str | None:
    """What ``path`` resolves to when it is not a regular file ("a directory", "a FIFO"...); None when it is one."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "a dangling symbolic link"
    except OSError as err:  # a link loop, a permission problem
        return f"unreadable ({err.strerror})"
    if stat.S_ISREG(mode):
        return None
    kinds = (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((what for test, what in kinds if test(mode)), "not a regular file")


def import_from(directory: Path) -> list[str]:
    """Serve the files ``overlay_files`` finds in place of the installed modules; return their paths."""
    if "torch" in sys.modules:
        raise RuntimeError("patched sources must be installed before torch is imported")
    files = overlay_files(directory)
    sys.meta_path.insert(0, _Finder(files))
    return [str(path.relative_to(directory)) for path in files.values()]
