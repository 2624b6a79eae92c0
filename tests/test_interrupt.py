"""Ctrl-C (issue 46): one line and exit 130, as for any Unix tool, whether SIGINT reaches the process
alone or its whole group (a terminal's Ctrl-C), and no process it started lives on."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from helpers import ROOT


def _marked() -> set[int]:
    """The processes whose environment holds this test's marker (forks and subprocesses inherit it)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if MARK.encode() in (entry / "environ").read_bytes():
                    found.add(int(entry.name))
            except OSError:
                continue
    return found


MARK = f"REPRO_INTERRUPT_TEST={uuid.uuid4().hex}"
INTERRUPTED_LINE = "check_upstream: interrupted; the ledger holds what was recorded before it"


def _shows(line: str, until: str) -> bool:
    return line.startswith(until) or line.startswith("import time:") and line.split("|")[-1].strip() == until


def _interrupted(args: list[str], *, after: float, group: bool, until: str = "") -> subprocess.CompletedProcess:
    """``python ARGS`` interrupted ``after`` seconds after it started, or after its stderr showed a line
    starting with ``until`` (or, run with ``-X importtime``, the line of the module named ``until``)."""
    key, value = MARK.split("=")
    env = {**os.environ, "PYTHONPATH": str(ROOT), key: value}
    proc = subprocess.Popen(
        [sys.executable, *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert proc.stderr is not None
    seen = ""
    if until:
        while not seen.endswith("\n") or not _shows(seen.splitlines()[-1], until):
            line = proc.stderr.readline()
            assert line, f"it ended before {until!r}: {seen[-2000:]}"
            seen += line
    else:
        time.sleep(after)
    (os.killpg if group else os.kill)(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, seen + err)


def _left() -> set[int]:
    deadline = time.monotonic() + 3  # a killed process is gone once its parent reaped it
    while _marked() and time.monotonic() < deadline:
        time.sleep(0.1)
    return _marked()


pytestmark = [
    pytest.mark.slow,  # each starts python -m repro and interrupts it mid-run
    pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="finding leftovers reads /proc"),
]


@pytest.mark.parametrize("group", [False, True], ids=["process", "group"])
@pytest.mark.parametrize(
    "args",
    [
        ["--slow"],
        ["--slow", "--json"],
        ["--support-table"],
        ["--candidates", "--bug", "full-backward-hook-flag"],
        ["--explore", "--budget", "60"],
    ],
    ids=" ".join,
)
def test_ctrl_c_is_one_line_exit_130_and_leaves_no_process(args, group):
    """--candidates is interrupted once its first candidate is judged: the others and the upstream
    patch's process are still running then."""
    until = "candidate 1/" if "--candidates" in args else ""
    proc = _interrupted(["-m", "repro", *args], after=3.5, group=group, until=until)
    assert proc.returncode == 130, proc.stderr[-2000:]
    said = [line for line in proc.stderr.strip().splitlines() if not line.startswith("candidate ")]
    assert said == ["python -m repro: interrupted"], proc.stderr[-2000:]
    assert _left() == set()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["-m", "repro", "--slow"], "python -m repro: interrupted"),
        (["-m", "repro.bisect", "full-backward-hook-flag"], "interrupted"),
    ],
    ids=["repro", "bisect"],
)
def test_ctrl_c_while_torch_loads_numpy_stops_the_run(args, said):
    """torch imports numpy from C++ and makes any error of it, KeyboardInterrupt too, a warning: the run
    went on without numpy and ended 0 (bisect: 1, "BUG"), saying nothing of the Ctrl-C."""
    proc = _interrupted(["-X", "importtime", *args], after=0, group=True, until="numpy.lib")
    lines = [line for line in proc.stderr.strip().splitlines() if not line.startswith("import time:")]
    assert (proc.returncode, lines[-1:], proc.stdout) == (130, [said], ""), proc.stderr[-2000:]


def _silent_index() -> tuple[socket.socket, str]:
    """A loopback 'index' that accepts connections and never answers: pip waits on it."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                held.append(server.accept()[0])
            except OSError:  # closed at the test's end
                return

    threading.Thread(target=accept, daemon=True).start()
    return server, f"http://127.0.0.1:{server.getsockname()[1]}/simple/"


def test_the_tracker_interrupted_while_pip_waits_is_one_line_and_ends_pip(tmp_path):
    server, url = _silent_index()
    ledger = tmp_path / "ledger.json"
    ledger.write_bytes((ROOT / "repro" / "ledger.json").read_bytes())
    try:
        proc = _interrupted(
            [
                "-m",
                "tracker.check_upstream",
                "--versions",
                "2.13.0",
                "--install-index-url",
                url,
                "--ledger",
                str(ledger),
            ],
            after=4,
            group=False,
        )
    finally:
        server.close()
    assert proc.returncode == 130, proc.stderr[-2000:]
    assert proc.stderr.strip().splitlines()[-1:] == [INTERRUPTED_LINE], proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and _left() == set()


@pytest.mark.parametrize("after", [0.8, 1.6, 3.0])
def test_the_tracker_sweeping_in_processes_interrupted_as_a_group_is_one_line(index, tmp_path, after):
    """A history sweep probes in spawned worker processes; a terminal's Ctrl-C reaches them too, and
    each printed a KeyboardInterrupt traceback (3 of 6 tries), most while it still imported."""
    from index_server import BUGGY, build_wheel
    from tracker_helpers import wheel_name

    from tracker.sweep import PROCESSES_FROM

    wheel = build_wheel(BUGGY, padding=1024)
    for minor in range(PROCESSES_FROM + 2):
        index.wheels[wheel_name(f"3.{minor}.0")] = wheel
    index.faults.delay = 0.3  # each request for the wheel: the workers are mid-probe for seconds
    ledger = tmp_path / "ledger.json"
    ledger.write_bytes((ROOT / "repro" / "ledger.json").read_bytes())
    proc = _interrupted(
        ["-m", "tracker.check_upstream", "--index-url", index.url, "--ledger", str(ledger)], after=after, group=True
    )
    assert proc.returncode == 130, proc.stderr[-2000:]
    assert proc.stderr.strip().splitlines()[-1:] == [INTERRUPTED_LINE], proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and _left() == set(), proc.stderr[-2000:]


@pytest.mark.parametrize("loaded", ["importlib.metadata", "repro.ledger", "tracker.history", "requests"])
def test_the_tracker_interrupted_while_its_modules_load_is_one_line(loaded, tmp_path):
    """Before check_upstream's main runs, a Ctrl-C cut one of its imports short, with a traceback. Sent
    when ``-X importtime`` says LOADED was imported: importlib.metadata is repro's first import, which
    tracker/__init__.py's handler must precede (it came after, and a busy CI machine's Ctrl-C at 0.1 s
    fell in between); the others reach halfway through. A process already in main says its own line."""
    ledger = tmp_path / "ledger.json"
    ledger.write_bytes((ROOT / "repro" / "ledger.json").read_bytes())
    nowhere = ["--versions", "9.9", "--install-index-url", "http://127.0.0.1:9/simple/", "--dry-run"]
    args = ["-X", "importtime", "-m", "tracker.check_upstream", "--ledger", str(ledger), *nowhere]
    proc = _interrupted(args, after=0, group=True, until=loaded)
    said = [line for line in proc.stderr.strip().splitlines() if not line.startswith("import time:")][-1:]
    assert proc.returncode == 130 and said in (["check_upstream: interrupted"], [INTERRUPTED_LINE]), proc.stderr
    assert "Traceback" not in proc.stderr
