"""``repro.output.leave``: how `python -m repro` and a candidate's process exit, skipping only the
interpreter's last garbage collection."""

from __future__ import annotations

import subprocess
import sys

from helpers import ROOT

LEAVING = """
import atexit, gc, sys
from repro.output import leave
atexit.register(lambda: print("atexit ran, objects frozen:", gc.get_freeze_count() > 0))
print("written", end="")
sys.stderr.write("err")
leave(3)
"""


def test_leave_exits_with_the_code_after_the_exit_handlers_and_flushes_both_streams():
    proc = subprocess.run([sys.executable, "-c", LEAVING], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 3
    assert proc.stdout == "writtenatexit ran, objects frozen: True\n" and proc.stderr == "err"
