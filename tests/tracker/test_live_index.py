"""Against the live package index: opt-in with ``pytest -m network``."""

from __future__ import annotations

import json

import pytest

from helpers import run, write_ledger

pytestmark = pytest.mark.network


def test_live_sweep_reads_a_sliver_of_each_wheel(tmp_path):
    ledger = write_ledger(tmp_path / "ledger.json")
    proc = run(["-m", "tracker.check_upstream", "--since", "2.13.0", "--json"], ledger=ledger)
    report = json.loads(proc.stdout)
    statics = {r["version"]: r["static"] for r in report["releases"]}
    assert statics["2.13.0"]["verdict"] == "present"
    assert {
        version: s
        for version, s in statics.items()
        if not (s["requests"] <= 10 and s["bytes_fetched"] <= 0.01 * s["wheel_size"])
    } == {}
    again = run(["-m", "tracker.check_upstream", "--since", "2.13.0", "--json"], ledger=ledger)
    assert json.loads(again.stdout)["releases"] == []
