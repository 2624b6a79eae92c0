"""Write results to stdout so that a reader who stops early (``| head``) costs no traceback.

Python raises BrokenPipeError when the reading end of a pipe has closed. The results were
already computed (and, for the tracker, recorded), so the run's exit code stands; stdout is
pointed at /dev/null so the interpreter's final flush cannot fail again (the recipe in
Python's documentation on SIGPIPE).
"""

from __future__ import annotations

import os
import sys


def emit(text: str, end: str = "\n") -> None:
    """Print ``text``; a closed stdout is not an error of the run."""
    try:
        sys.stdout.write(text + end)
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
