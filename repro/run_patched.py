"""Run a module or script with one candidate fix applied to torch in memory.

    python -m repro.run_patched CANDIDATE -m MODULE [ARGS...]
    python -m repro.run_patched CANDIDATE SCRIPT.py [ARGS...]

    python -m repro.run_patched --sources DIR (-m MODULE | SCRIPT) [ARGS...]

Nothing is written to site-packages: the patch lives only in this process, which is why
each candidate is judged in a subprocess of its own. ``--sources DIR`` serves the torch
files found under DIR (e.g. ``DIR/torch/jit/_script.py`` after ``patch -p1``) instead.
"""

from __future__ import annotations

import runpy
import sys

from pathlib import Path

from repro.candidates import CANDIDATES
from repro.environment import import_torch
from repro.source_import import import_from

USAGE = (f"usage: python -m repro.run_patched ({' | '.join(CANDIDATES)} | --sources DIR) "
         "(-m MODULE | SCRIPT) [ARGS...]")


def main(argv: list[str]) -> None:
    if argv[:1] == ["--sources"] and len(argv) > 1:
        directory, argv = Path(argv[1]), argv[1:]
        if not directory.is_dir():
            sys.exit(f"run_patched: {directory} is not a folder")
        import_from(directory)
        import_torch()
    elif argv[:1] and argv[0] in CANDIDATES:
        CANDIDATES[argv[0]].apply()  # before anything imports torch: some candidates replace its sources
    else:
        sys.exit(USAGE)
    if len(argv) < 2 or (argv[1] == "-m" and len(argv) < 3):
        sys.exit(USAGE)
    if argv[1] == "-m":
        sys.argv = [argv[2], *argv[3:]]
        runpy.run_module(argv[2], run_name="__main__", alter_sys=True)
    else:
        sys.argv = argv[1:]
        runpy.run_path(argv[1], run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
