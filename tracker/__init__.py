"""The tooling run from a checkout: the scheduled upstream check, the docs it generates, the matrix.

Its modules run with ``python -m tracker.NAME`` from the clone's root; in an environment without
what they import, each says so in one sentence (exit 2) rather than with the traceback of the first
import that fails, and Ctrl-C while they load is one line (exit 130)."""

from __future__ import annotations

import signal
import sys
from types import FrameType


def _tool() -> str:
    """The tool's name, as its usage and errors say it (each prog is its module's): the module run with
    -m (``sys.argv`` says only "-m" while the package loads), else "tracker"."""
    argv = list(getattr(sys, "orig_argv", []))
    after = argv[argv.index("-m") + 1] if "-m" in argv[:-1] else ""
    return after.rpartition(".")[2] if after.startswith("tracker.") else "tracker"


def _interrupted_while_loading(signum: int, frame: FrameType | None) -> None:
    print(f"{_tool()}: interrupted", file=sys.stderr)
    raise SystemExit(130)


if sys.argv[:1] == ["-m"]:  # run as python -m tracker.NAME, and its modules still load: Ctrl-C is one
    # line, exit 130, not the traceback of an import it cut short; each tool's main puts Python's
    # KeyboardInterrupt back (tracker.check_upstream's does, to end what it started)
    signal.signal(signal.SIGINT, _interrupted_while_loading)

# the handler comes before this import: it loads importlib.metadata, 30-40 ms of the window
from repro.requirements import unmet  # noqa: E402

_missing = unmet(("packaging", "requests"), "pip install packaging requests")  # urllib3 comes with requests
if _missing:
    print(f"{_tool()}: error: {_missing}", file=sys.stderr)
    raise SystemExit(2)
