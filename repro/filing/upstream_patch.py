"""A bug's proposed upstream fix as a unified diff, generated from the installed torch's own files or a
PyTorch checkout's.

The fix itself is the bug's (``Bug.fixes.patch``: an edit located with ``ast``, so the diff applies to
whichever release is installed); this module turns it into a ``git apply``/``patch -p1`` diff with its
regression test as a new file (registered with upstream's runner where that needs it), and checks it
against a checkout with ``git apply --check``.
"""

from __future__ import annotations

import difflib
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from repro.catalogue.bug import Bug
from repro.catalogue.edits import lines_of
from repro.catalogue.fixes import PatchError, UpstreamPatch
from repro.filing.candidates import InstalledSources
from repro.sanitise import one_line


def unified_diff(before: Mapping[str, str | None], after: Mapping[str, str]) -> str:
    """A ``git apply``/``patch -p1`` diff; a file absent from ``before`` is created. Lines are split on
    ``\\n`` alone, so a form feed or another separator stays inside its line; a last line without a
    newline is marked as git marks it."""
    chunks = []
    for path in after:
        old = before.get(path)
        for line in difflib.unified_diff(
            lines_of(old or ""),
            lines_of(after[path]),
            fromfile=f"a/{path}" if old is not None else "/dev/null",
            tofile=f"b/{path}",
        ):
            chunks.append(line if line.endswith("\n") else f"{line}\n\\ No newline at end of file\n")
    return "".join(chunks)


def proposed_diff(bug: Bug, against: Path | None = None) -> str:
    """The whole proposal for ``bug``: the fix and its regression test. Against the installed release's
    files by default; ``against`` a PyTorch checkout, its own files, with the test registered with
    upstream's runner, checked there with ``git apply --check``."""
    patch = bug.fixes.patch
    if against is None:
        sources = InstalledSources()
        changed = patch.edit(sources)
        return unified_diff({path: sources[path] for path in changed}, {**changed, patch.test.path: patch.test.text})
    checkout = checkout_sources(against, patch)
    changed = patch.edit(checkout)
    runner = {patch.test.runner: register_test(patch, checkout[patch.test.runner] or "")} if patch.test.runner else {}
    diff = unified_diff(checkout, {**changed, **runner, patch.test.path: patch.test.text})
    _check_applies(diff, against)
    return diff


def checkout_sources(root: Path, patch: UpstreamPatch) -> dict[str, str | None]:
    """The files of a PyTorch checkout the patch edits, and its test runner; one sentence when it is not
    a checkout (or lacks one of them)."""
    if not root.is_dir():
        raise PatchError(f"{root} is not a folder.")
    needed = [*patch.files, *([patch.test.runner] if patch.test.runner else [])]
    missing = [path for path in needed if not (root / path).is_file()]
    if missing:
        raise PatchError(f"{root} is not a PyTorch checkout: it lacks {', '.join(missing)}.")
    return {path: _read(root, path) for path in needed}


def _read(root: Path, path: str) -> str:
    """One checkout file as UTF-8 text; one sentence when it cannot be read or is not UTF-8."""
    try:
        data = (root / path).read_bytes()
    except OSError as err:
        raise PatchError(f"{root / path} cannot be read: {err.strerror or err}.") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise PatchError(f"{root / path} is not UTF-8 text (byte {err.start} is {data[err.start]:#04x}).") from None


def register_test(patch: UpstreamPatch, runner: str) -> str:
    """The runner importing the new test after its last import of its kind, as upstream does."""
    test = patch.test
    lines = lines_of(runner)
    imports = [i for i, line in enumerate(lines) if line.startswith(test.after)]
    if not imports:
        raise PatchError(f"{test.runner} has no line starting {test.after!r}; register the test by hand.")
    if test.registration in runner:
        raise PatchError(f"{test.runner} already imports the regression test.")
    lines.insert(imports[-1] + 1, test.registration + "\n")
    return "".join(lines)


def _check_applies(diff: str, root: Path) -> None:
    if shutil.which("git") is None:
        raise PatchError("git is not installed, so the patch cannot be checked with git apply --check.")
    check = subprocess.run(["git", "apply", "--check", "-"], cwd=root, input=diff, capture_output=True, text=True)
    if check.returncode:
        reason = (check.stderr.strip().splitlines() or ["no reason given"])[0]
        raise PatchError(f"git apply --check refuses the patch in {root}: {one_line(reason, 200)}")
