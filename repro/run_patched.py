"""Run a module or script with one candidate fix applied to torch in memory.

    python -m repro.run_patched [BUG:]CANDIDATE -m MODULE [ARGS...]
    python -m repro.run_patched [BUG:]CANDIDATE SCRIPT.py [ARGS...]

    python -m repro.run_patched --sources DIR (-m MODULE | SCRIPT) [ARGS...]

Nothing is written to site-packages: the patch lives only in this process. A candidate is one of a
catalogued bug's (BUG:NAME; a bare NAME is the first bug's). One that edits torch's source files,
the upstream-patch candidate of each bug included, is served this way, before torch is imported;
the others can also be applied and reverted inside one process. ``--sources DIR`` serves the torch
files under DIR (e.g. ``DIR/torch/jit/_script.py`` after ``patch -p1``) that differ from the
installed ones instead, and names them on stderr; symbolic links in DIR are followed, and a
``torch/**/*.py`` that is not a regular file (a folder, a dangling link, a FIFO) is named instead.
``-h``/``--help`` prints this (exit 0). Exit 2, in one sentence: usage, no torch installed, nothing
to overlay, a source that is not a regular file or cannot be read, or a torch that does not import
with the files served (a conflict marker left in one, say).
"""

from __future__ import annotations

import runpy
import sys
import textwrap
from contextlib import AbstractContextManager, ExitStack, nullcontext
from pathlib import Path
from typing import NoReturn

from repro.catalogue.fixes import PatchError
from repro.environment import EnvironmentProblem, import_torch
from repro.filing.candidates import UnknownCandidate, applied, find, specs
from repro.filing.source_import import NothingToOverlay, UnusableSource, import_from
from repro.sanitise import for_terminal
from repro.source_checks import installed_torch_root

PROG = "python -m repro.run_patched"
USAGE = f"usage: {PROG} ([BUG:]CANDIDATE | --sources DIR) (-m MODULE | SCRIPT) [ARGS...]"
EXIT_USAGE = 2


def _fail(message: str) -> NoReturn:
    """One sentence on stderr (one line: a path in it stays whole), then exit 2."""
    print(for_terminal(message), file=sys.stderr)
    raise SystemExit(EXIT_USAGE)


def _usage(problem: str) -> NoReturn:
    """A usage error, as argparse prints one: the usage (wrapped at 100 columns), then what was wrong."""
    usage = textwrap.wrap(USAGE, 100, subsequent_indent="    ", break_on_hyphens=False)
    print("\n".join([*usage, f"{PROG}: error: {problem}"]), file=sys.stderr)
    raise SystemExit(EXIT_USAGE)


def _help() -> NoReturn:
    """``-h``/``--help``: the usage and what the command does, within 100 columns, exit 0."""
    usage = textwrap.wrap(USAGE, 100, subsequent_indent="    ", break_on_hyphens=False)
    candidates = [f"  {spec}" for spec in specs()]
    about = (__doc__ or "").strip().splitlines()
    print("\n".join([*usage, "", *about, "", "candidates:", *candidates]))
    raise SystemExit(0)


def main(argv: list[str]) -> None:
    fix: AbstractContextManager[None] = nullcontext()
    if argv[:1] in (["-h"], ["--help"]):
        _help()
    if argv[:1] == ["--sources"] or (argv and not argv[0].startswith("-")):
        try:
            installed_torch_root()  # what every candidate and every overlay is made against
        except FileNotFoundError:
            _fail(f"{PROG}: error: torch is not installed for {sys.executable}: nothing to patch")
    if argv[:1] == ["--sources"] and len(argv) > 1:
        directory, argv = Path(argv[1]), argv[1:]
        if not directory.is_dir():
            _fail(f"{PROG}: error: {directory} is not a folder")
        try:
            served = import_from(directory)
        except (NothingToOverlay, UnusableSource) as problem:
            _fail(f"{PROG}: error: {problem}")
        print(
            for_terminal(f"{PROG}: torch files from {directory} in place of the installed ones: {', '.join(served)}"),
            file=sys.stderr,
        )
        try:
            import_torch()
        except EnvironmentProblem as problem:
            _fail(f"{PROG}: error: with the files from {directory}, {problem}")
    elif argv[:1] == ["--sources"]:
        _usage("--sources needs a folder (DIR)")
    elif argv and argv[0].startswith("-"):
        _usage(for_terminal(f"{argv[0]!r} is neither a candidate nor --sources DIR"))
    elif argv:
        try:
            fix = applied(find(argv[0])[1])  # entered before anything imports torch
        except UnknownCandidate as problem:
            _usage(for_terminal(f"{problem} (see --help)"))
    else:
        _usage("give a candidate or --sources DIR, then -m MODULE or SCRIPT")
    if len(argv) < 2:
        _usage("nothing to run after the candidate: give -m MODULE or SCRIPT")
    if argv[1] == "-m" and len(argv) < 3:
        _usage("-m needs a MODULE")
    with ExitStack() as stack:
        try:
            stack.enter_context(fix)
        except PatchError as problem:  # the installed torch lacks what the candidate edits
            _fail(f"{PROG}: error: {argv[0]} cannot be applied: {problem}")
        if argv[1] == "-m":
            sys.argv = [argv[2], *argv[3:]]
            runpy.run_module(argv[2], run_name="__main__", alter_sys=True)
        else:
            sys.argv = argv[1:]
            runpy.run_path(argv[1], run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
