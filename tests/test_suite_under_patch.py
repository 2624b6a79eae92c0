""".ci/suite-under-patch, interrupted: one line, exit 130, and no pytest or worker left running."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from helpers import ROOT


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def _pytest_child(parent: int, timeout: float = 60) -> int:
    """The pid of ``parent``'s child once it has one (the suite's pytest)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
        if children:
            return int(children[0])
        time.sleep(0.1)
    raise AssertionError("the suite never started pytest")


@pytest.mark.slow  # a pytest started and ended: 4 s each
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_the_suite_under_patch_interrupted_ends_its_pytest_group_in_one_line(sig):
    """Before: a KeyboardInterrupt traceback, and pytest with its workers left running."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [str(ROOT / ".ci" / "suite-under-patch"), "copy-shares-training"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        child = _pytest_child(proc.pid)
        time.sleep(2)  # let pytest start its workers
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert err.splitlines() == ["suite-under-patch: interrupted; the suite's process group was ended"]
    assert not _group_alive(child)
