"""Write results to stdout so that a reader who stops early (``| head``) costs no traceback.

Python raises BrokenPipeError when the reading end of a pipe has closed. The results were
already computed (and, for the tracker, recorded), so the run's exit code stands; stdout is
pointed at /dev/null so the interpreter's final flush cannot fail again (the recipe in
Python's documentation on SIGPIPE).

Native libraries write to file descriptor 1 behind Python's back (gloo, from torch 2.8, prints
"[Gloo] Rank 0 is connected to 0 peer ranks" for each process group): while the work runs, descriptor 1
is stderr, so that the report on stdout stays one clean document (JSON a tracker parses).
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import gc
import io
import os
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NoReturn

INTERRUPTED = 130  # the exit code of a run Ctrl-C ended, as for any Unix tool


class OutputError(Exception):
    """stdout refused the results (a full disk: ``> /dev/full``): one sentence and exit 2, never 1,
    which means drift."""


def emit(text: str, end: str = "\n") -> None:
    """Print ``text``; a closed stdout is not an error of the run, a full one is ``OutputError``."""
    try:
        sys.stdout.write(text + end)
        sys.stdout.flush()
    except BrokenPipeError:
        _to_devnull()
    except OSError as err:
        _to_devnull()  # what is left in the buffer goes nowhere at exit, rather than failing again
        raise OutputError(f"stdout cannot take the results: {err.strerror or err}") from None


def answered(run: Callable[[], int], prog: str, interrupted: str = "interrupted") -> int:
    """``run()``'s exit code; Ctrl-C is one line (``PROG: interrupted``) and exit 130, a second Ctrl-C
    no longer cutting the way out short, and stdout that refused the results one sentence and exit 2."""
    try:
        return run()
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        print(f"{prog}: {interrupted}", file=sys.stderr)
        return INTERRUPTED
    except OutputError as problem:
        print(f"{prog}: error: {problem}", file=sys.stderr)
        return 2


def parsed(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """``parser.parse_args``, with ``--help`` held to ``emit``'s rule: argparse swallows a failed write,
    and the help a full disk lost exited 0 unsaid; now it is ``OutputError``."""
    try:
        return parser.parse_args(argv)
    except SystemExit as done:
        if not done.code:
            emit("", end="")  # the flush argparse never checked
        raise


def _to_devnull() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


@contextmanager
def native_output_to_stderr() -> Iterator[None]:
    """Descriptor 1 points at stderr and ``sys.stdout`` at the real stdout, until the block ends."""
    try:
        own = sys.stdout.fileno() == 1
    except (AttributeError, OSError, io.UnsupportedOperation):  # a captured stream (pytest's capsys)
        own = False
    if not own:
        yield
        return
    sys.stdout.flush()
    original, saved = sys.stdout, os.dup(1)
    os.dup2(2, 1)
    sys.stdout = io.TextIOWrapper(os.fdopen(os.dup(saved), "wb"), encoding=original.encoding, line_buffering=False)
    try:
        yield
    finally:
        report, sys.stdout = sys.stdout, original
        try:
            report.close()  # flushes what the run printed
        except BrokenPipeError:  # the reader left early (emit's case): nothing more to say
            pass
        os.dup2(saved, 1)
        os.close(saved)


def leave(code: int) -> NoReturn:
    """Exit with ``code`` once the work is done, without the interpreter's last garbage collection: it
    walks every object torch and the runs made (0.68 s of `--slow`'s exit, 0.15 s without, measured
    2026-12-05), only to free memory the process gives back anyway: `python -m repro` and the process
    a candidate is judged in leave this way. ``atexit`` handlers run and stdout and stderr are flushed
    as before (every file this project writes is closed by then); only objects
    in reference cycles are left unfinalized."""
    gc.freeze()
    if code == INTERRUPTED:  # exit handlers and streams as at a normal exit, then out with 130: CPython
        # ends a process with SIGINT itself (-2, not 130) once a KeyboardInterrupt went through code that
        # torch ran with PyRun_*, even one the program caught and answered
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
            sys.stderr.flush()
        atexit._run_exitfuncs()
        os._exit(code)
    raise SystemExit(code)
