"""The tracker's command line (issue 27, items 4 and 7): where its ledger is, what it refuses to write,
a dry run, a step summary that cannot be written, and a network failure in one sentence."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from index_server import BUGGY, FIXED_IGNORED, IndexServer, build_wheel
from tracker_helpers import check_upstream_cli, tracker, wheel_name

from helpers import ROOT, write_ledger


@pytest.fixture
def index():
    server = IndexServer()
    server.url = server.start()
    server.wheels[wheel_name("2.13.0")] = build_wheel(BUGGY, padding=1024)
    yield server
    server.stop()


def one_sentence(stderr: str, path: Path | None = None) -> str:
    """The one line on stderr, within 100 columns but for ``path`` in it, which stays whole."""
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    assert len(lines[0].replace(str(path), "PATH") if path else lines[0]) <= 100, lines[0]
    return lines[0]


def test_the_ledger_option_wins_over_the_environment(index, tmp_path):
    named, other = write_ledger(tmp_path / "named.json"), write_ledger(tmp_path / "other.json")
    before = other.read_bytes()
    code, _, err = tracker("--index-url", index.url, "--ledger", str(named), env={"REPRO_LEDGER": str(other)})
    assert code == 0, err
    assert "2.13.0" in json.loads(named.read_text())["releases"] and other.read_bytes() == before


def test_a_mistyped_ledger_path_is_refused_unless_init(index, tmp_path):
    """Before: a mistyped REPRO_LEDGER silently started a new ledger there."""
    typo = tmp_path / "ledgr.json"
    code, out, err = tracker("--index-url", index.url, env={"REPRO_LEDGER": str(typo)})
    assert code == 2 and out == "" and not typo.exists() and not index.hits
    assert "does not exist" in one_sentence(err, typo) and "--init" in err
    code, _, err = tracker("--index-url", index.url, "--ledger", str(typo), "--init")
    assert code == 0 and "2.13.0" in json.loads(typo.read_text())["releases"], err


def test_a_ledger_inside_an_installed_package_is_never_written(index, tmp_path):
    """Before: installed as a package, the tracker rewrote the ledger inside site-packages."""
    packaged = tmp_path / "lib" / "python3.11" / "site-packages" / "repro" / "ledger.json"
    packaged.parent.mkdir(parents=True)
    write_ledger(packaged)
    before = packaged.read_bytes()
    code, out, err = tracker("--index-url", index.url, env={"REPRO_LEDGER": str(packaged)})
    assert code == 2 and out == "" and not index.hits and packaged.read_bytes() == before
    assert "installed package" in one_sentence(err, packaged)
    code, out, err = tracker("--index-url", index.url, "--ledger", str(packaged), "--dry-run", "--json")
    assert code == 0 and [r["version"] for r in json.loads(out)["releases"]] == ["2.13.0"], err
    assert packaged.read_bytes() == before


def test_a_dry_run_writes_neither_the_ledger_nor_a_summary(index, tmp_path):
    ledger, summary = write_ledger(tmp_path / "ledger.json"), tmp_path / "summary.md"
    before = ledger.read_bytes()
    code, out, err = tracker(
        "--index-url", index.url, "--ledger", str(ledger), "--dry-run", env={"GITHUB_STEP_SUMMARY": str(summary)}
    )
    assert code == 0 and "2.13.0" in out, err
    assert ledger.read_bytes() == before and not summary.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ledger.json"]  # no lock, no temporary file


@pytest.mark.slow  # the check in fresh interpreters (0.8 s)
def test_a_summary_nobody_reads_is_a_warning_and_the_change_still_exits_3(index, tmp_path):
    """A FIFO without a reader: the old writer blocked in open() for ever; a full disk (/dev/full) is the
    same warning. The change's exit code 3 stands."""
    index.wheels[wheel_name("2.12.0")] = build_wheel(BUGGY, padding=1024)
    index.wheels[wheel_name("2.13.0")] = build_wheel(FIXED_IGNORED, padding=1024)
    fifo = tmp_path / "summary.fifo"
    os.mkfifo(fifo)
    for summary in (fifo, Path("/dev/full")):
        ledger = write_ledger(tmp_path / "ledger.json")
        proc = check_upstream_cli(index.url, ledger=ledger, env={"GITHUB_STEP_SUMMARY": str(summary)}, timeout=60)
        assert proc.returncode == 3, proc.stderr
        warnings = [line for line in proc.stderr.splitlines() if "GITHUB_STEP_SUMMARY" in line]
        assert len(warnings) == 1 and warnings[0].startswith("check_upstream: warning: "), proc.stderr
        assert len(warnings[0]) <= 100 and "Traceback" not in proc.stderr


def test_a_network_failure_is_one_sentence_naming_host_and_cause(tmp_path):
    """Before: one 351-column line of urllib3's pool internals."""
    with socket.socket() as closed:  # a loopback port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    ledger = write_ledger(tmp_path / "ledger.json")
    code, out, err = tracker("--index-url", f"http://127.0.0.1:{port}", "--ledger", str(ledger))
    line = one_sentence(err)
    assert code == 1 and out == "" and f"cannot reach 127.0.0.1:{port}: the connection was refused" in line, line
    assert "HTTPConnectionPool" not in line and "Max retries" not in line


def test_the_help_names_the_ledger_options():
    proc = subprocess.run(
        [sys.executable, "-m", "tracker.check_upstream", "--help"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0
    assert [o for o in ("--ledger PATH", "--init", "--dry-run") if o not in proc.stdout] == []


def test_the_tracker_runs_by_path_from_any_folder_as_the_docs_say(tmp_path):
    """Issue 46: `python -m tracker...` finds the tracker only from the clone's root (it is not installed);
    the README and docs/tracker.md say so, and show the script's path for any other folder."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tracker" / "check_upstream.py"), "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0 and proc.stdout.startswith("usage: check_upstream"), proc.stderr
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert "run from the clone's root" in readme and "/path/to/clone/tracker/check_upstream.py" in readme
    assert "python /path/to/clone/tracker/check_upstream.py" in (ROOT / "docs" / "tracker.md").read_text()


@pytest.mark.parametrize(
    "module",
    [pytest.param("device_report", marks=pytest.mark.slow), "support_doc", "check_upstream", "catalogue_docs"]
    + ["matrix"],
)  # device_report imports torch before it parses its options (2 s)
def test_each_tracker_tools_usage_errors_and_its_own_errors_share_one_prefix(module, tmp_path):
    """Issue 46: device_report's argparse said "python -m tracker.device_report: error:" and its own
    errors "device_report: error:"."""
    proc = subprocess.run(
        [sys.executable, "-m", f"tracker.{module}", "--no-such-option"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and f"\n{module}: error: " in f"\n{proc.stderr}", proc.stderr
    own = set(re.findall(r'f?"([\w. -]+): error: ', (ROOT / "tracker" / f"{module}.py").read_text()))
    assert own == {module}  # the tool's own errors: the same prefix as argparse's
