"""The ledger: expectations derived from it, and writes that survive crashes and concurrency."""

from __future__ import annotations

import json
import multiprocessing

import pytest

from repro.ledger import LedgerError, expectation_for, load, new_ledger, update


@pytest.mark.parametrize(
    ("fixed_in", "torch_version", "outcome"),
    [
        (None, "2.13.0+cpu", "present"),
        ("2.13.0", "2.13.0+cpu", "fixed"),  # a local build of the fixed release
        ("2.13.0", "2.14.1", "fixed"),
        ("2.14.0", "2.13.0", "present"),
        ("2.14.0", "2.14.0.dev20260101+cpu", "present"),  # a nightly before the release
    ],
)
def test_expectation_from_fixed_in(fixed_in, torch_version, outcome):
    assert expectation_for({"fixed_in": fixed_in, "releases": {}}, torch_version).outcome == outcome


def test_confirmed_result_for_the_release_wins_over_fixed_in():
    ledger = {"fixed_in": "2.10.0", "releases": {"2.13.0": {"dynamic": {"verdict": "present"}}}}
    expectation = expectation_for(ledger, "2.13.0+cpu")
    assert expectation.outcome == "present" and "2.13.0" in expectation.reason


def test_committed_ledger_is_valid():
    from repro.ledger import DEFAULT_PATH

    data = load(DEFAULT_PATH)
    assert "fixed_in" in data and isinstance(data["releases"], dict)


def test_failed_change_leaves_the_ledger_untouched(tmp_path):
    path = tmp_path / "ledger.json"
    update(path, lambda d: d["releases"].update({"1.0": {"static": None}}))
    before = path.read_bytes()

    def crash(data):
        data["releases"].clear()
        raise RuntimeError("crash mid-run")

    with pytest.raises(RuntimeError):
        update(path, crash)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir() if p.suffix == ".tmp"] == []


def _add_release(args):
    path, version = args
    update(path, lambda d: d["releases"].__setitem__(version, {"static": {"verdict": "present"}}))


def test_concurrent_writers_lose_no_entry(tmp_path):
    path = tmp_path / "ledger.json"
    path.write_text(json.dumps(new_ledger()))
    versions = [f"2.{i}.0" for i in range(24)]
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        pool.map(_add_release, [(path, v) for v in versions])
    assert sorted(load(path)["releases"]) == sorted(versions)


def test_malformed_ledger_is_a_ledger_error(tmp_path):
    path = tmp_path / "ledger.json"
    path.write_text('{"releases": []}')
    with pytest.raises(LedgerError, match="no 'releases' object"):
        load(path)
