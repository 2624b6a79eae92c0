"""``repro.output.leave``: how `python -m repro` and a candidate's process exit, skipping only the
interpreter's last garbage collection."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

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


def _to_full(args: list[str]) -> subprocess.CompletedProcess:
    with open("/dev/full", "w") as full:
        return subprocess.run(
            [sys.executable, *args], stdout=full, stderr=subprocess.PIPE, text=True, cwd=ROOT, timeout=300
        )


TORCH = pytest.mark.slow  # a fresh interpreter that imports torch: 2-3 s


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize(
    ("args", "prefix"),
    [
        pytest.param(["-m", "repro", "--list-bugs"], "python -m repro", marks=TORCH),
        pytest.param(["-m", "repro", "--bug", "init-hooks-break-plain-forward"], "python -m repro", marks=TORCH),
        (
            # a release that cannot be installed (nothing listens on port 9): an error to report, no drift
            ["-m", "tracker.check_upstream", "--ledger", "{tmp}/ledger.json", "--init", "--dry-run"]
            + ["--versions", "9.9", "--install-index-url", "http://127.0.0.1:9/simple/"],
            "check_upstream",
        ),
        (["-m", "repro", "--help"], "python -m repro"),  # argparse swallowed it: exit 0, unsaid
        (["-m", "tracker.check_upstream", "--help"], "check_upstream"),
    ],
    ids=["list-bugs", "report", "tracker", "help", "tracker help"],
)
def test_a_full_stdout_is_one_sentence_exit_2_never_drift(args, prefix, tmp_path):
    """Issue 46: exit 1 means drift (or, for the tracker, errors); a disk that cannot take the report
    is neither: one sentence, exit 2."""
    proc = _to_full([arg.replace("{tmp}", str(tmp_path)) for arg in args])
    assert proc.returncode == 2, proc.stderr
    said = f"{prefix}: error: stdout cannot take the results: No space left on device"
    assert proc.stderr.splitlines()[-1:] == [said] and "Traceback" not in proc.stderr
