"""The tracker and its ledger (issue 8, items 11, 13, 15): where the ledger lives is checked before any
request, a failed install never replaces a confirmed verdict, and one key per public release."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from helpers import run, write_ledger
from index_server import BUGGY, IndexServer, build_wheel


@pytest.fixture
def index():
    server = IndexServer()
    server.url = server.start()
    server.wheels["torch-2.13.0-cp311-cp311-manylinux_2_28_x86_64.whl"] = build_wheel(BUGGY, padding=1024)
    yield server
    server.stop()


def _refused_before_any_request(proc: subprocess.CompletedProcess, index: IndexServer, says: str) -> None:
    assert proc.returncode == 2 and proc.stdout == "" and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("check_upstream: error: the ledger ") and says in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and not index.hits  # no index, wheel or API request


def test_a_ledger_in_a_missing_directory_is_refused_before_any_request(index, tmp_path):
    proc = run(["-m", "tracker.check_upstream", "--index-url", index.url, "--upstream-issue", "pytorch/pytorch#1",
                "--github-api-url", index.url], ledger=tmp_path / "missing" / "ledger.json")
    _refused_before_any_request(proc, index, f"its directory {tmp_path / 'missing'} does not exist")


@pytest.fixture
def read_only_directory(tmp_path):
    """A directory this process cannot write into: mode 0555 and, for root (which ignores the mode),
    immutable (``chattr +i``)."""
    directory = tmp_path / "read-only"
    directory.mkdir()
    write_ledger(directory / "ledger.json")
    directory.chmod(0o555)
    immutable = os.geteuid() == 0
    if immutable and (shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(directory)]).returncode):
        directory.chmod(0o755)
        pytest.skip("running as root, and chattr +i is unavailable: root writes into a 0555 directory")
    yield directory
    if immutable:
        subprocess.run(["chattr", "-i", str(directory)], check=True)
    directory.chmod(0o755)


def test_a_ledger_in_a_read_only_directory_is_refused_before_any_request(index, read_only_directory):
    proc = run(["-m", "tracker.check_upstream", "--index-url", index.url], ledger=read_only_directory / "ledger.json")
    _refused_before_any_request(proc, index, f"its directory {read_only_directory} is read-only")
