"""Run a module or script with one candidate fix applied to torch in memory.

    python -m repro.run_patched CANDIDATE -m MODULE [ARGS...]
    python -m repro.run_patched CANDIDATE SCRIPT.py [ARGS...]

Nothing is written to site-packages: the patch lives only in this process, which is why
each candidate is judged in a subprocess of its own.
"""

from __future__ import annotations

import runpy
import sys

from repro.candidates import CANDIDATES
from repro.environment import import_torch


def main(argv: list[str]) -> None:
    if len(argv) < 2 or argv[0] not in CANDIDATES or (argv[1] == "-m" and len(argv) < 3):
        sys.exit(f"usage: python -m repro.run_patched {{{','.join(CANDIDATES)}}} (-m MODULE | SCRIPT) [ARGS...]")
    import_torch()
    CANDIDATES[argv[0]].apply()
    if argv[1] == "-m":
        sys.argv = [argv[2], *argv[3:]]
        runpy.run_module(argv[2], run_name="__main__", alter_sys=True)
    else:
        sys.argv = argv[1:]
        runpy.run_path(argv[1], run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
