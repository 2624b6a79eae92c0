"""The tracker and its ledger (issue 8, items 11, 13, 15): where the ledger lives is checked before any
request, a failed install never replaces a confirmed verdict, and one key per public release."""

from __future__ import annotations

import subprocess

import pytest

from helpers import run, write_ledger
from index_server import BUGGY, IndexServer, build_wheel
from test_ledger import read_only


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


def test_a_ledger_in_a_read_only_directory_is_refused_before_any_request(index, tmp_path):
    ledger = write_ledger(tmp_path / "ledger.json")
    with read_only(tmp_path):
        proc = run(["-m", "tracker.check_upstream", "--index-url", index.url], ledger=ledger)
    _refused_before_any_request(proc, index, f"its directory {tmp_path} is read-only")
