"""The tracker and its ledger (issue 8, items 11, 13, 15): where the ledger lives is checked before any
request, a failed install never replaces a confirmed verdict, and one key per public release."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from index_server import BUGGY, IndexServer, build_wheel
from packaging.version import Version
from tracker_helpers import check, check_upstream_cli, packaging_wheel, reproducer_report, spy_torch

from helpers import A_BUG, read_only, run, write_ledger
from repro import ledger as ledger_io
from repro.catalogue import BUGS
from repro.ledger import CUT, TEXT_CAP, expectation_for, load
from repro.ledger import release_key as ledger_release_key
from tracker import sweep
from tracker.check_upstream import parse_args
from tracker.index import Release


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
    proc = check_upstream_cli(
        index.url,
        "--upstream-issue",
        "pytorch/pytorch#1",
        "--github-api-url",
        index.url,
        ledger=tmp_path / "missing" / "ledger.json",
    )
    _refused_before_any_request(proc, index, f"its directory {tmp_path / 'missing'} does not exist")


def test_a_ledger_in_a_read_only_directory_is_refused_before_any_request(index, tmp_path):
    ledger = write_ledger(tmp_path / "ledger.json")
    with read_only(tmp_path):
        proc = check_upstream_cli(index.url, ledger=ledger)
    _refused_before_any_request(proc, index, f"its directory {tmp_path} is read-only")


CONFIRMED = {
    "verdict": "present",
    "detail": "14 of 14 scenario runs in its scope show it",
    "checked_at": "2026-12-02T19:46:49+00:00",
}


def _confirmed_ledger(path: Path) -> Path:
    """The original bug confirmed present for 2.13.0; the other bugs never confirmed there."""
    path.write_text(
        json.dumps(
            {
                "schema": 2,
                "bugs": {},
                "releases": {
                    "2.13.0": {
                        "bugs": {A_BUG: {"static": {"verdict": "present", "evidence": []}, "dynamic": CONFIRMED}}
                    }
                },
            }
        )
    )
    return path


@pytest.mark.slow
def test_a_failed_install_is_an_error_never_a_status(index, tmp_path):
    """``--versions 2.13`` whose install fails (the index's wheel is no installable wheel): no verdict
    of 2.13.0 changes (the confirmed present stays, the never-confirmed bugs get no dynamic verdict), the
    release has an error and its attempt (exit 1, no status change); the next run retries it and says the
    same. (An install index that does not answer is no attempt at all: test_tracker_installable.py.)"""
    ledger = _confirmed_ledger(tmp_path / "ledger.json")
    install = f"{index.url}/simple/"
    args = ["-m", "tracker.check_upstream", "--versions", "2.13", "--install-index-url", install, "--json"]
    for attempt in (1, 2):
        proc = run(args, ledger=ledger)
        report, data_ = json.loads(proc.stdout), load(ledger)
        assert proc.returncode == 1 and "Traceback" not in proc.stderr and report["status_changed"] is False
        assert list(data_["releases"]) == ["2.13.0"]  # "2.13" is 2.13.0's key, as an installed torch reads it
        release = data_["releases"]["2.13.0"]
        assert release["bugs"][A_BUG] == {"static": {"verdict": "present", "evidence": []}, "dynamic": CONFIRMED}
        assert [b for b in BUGS if b != A_BUG and "dynamic" in release["bugs"].get(b, {})] == []
        assert len(release["failed_attempts"]) == attempt
        assert release["failed_attempts"][-1]["detail"].startswith("installing torch 2.13 failed")
        assert report["errors"] == [f"2.13.0: {release['error']}"]
        assert f"({attempt} of {sweep.ATTEMPTS} attempts)" in release["error"]
        assert expectation_for(data_, "2.13.0+cpu", A_BUG).outcome == "present"


def _attempt(verdict: str, detail: str) -> dict[str, dict]:
    return {
        bug_id: {"verdict": verdict, "detail": detail, "checked_at": "2026-12-03T00:00:00+00:00"} for bug_id in BUGS
    }


def test_failed_attempts_make_a_release_unmeasurable_until_a_report_clears_them(tmp_path):
    ledger = _confirmed_ledger(tmp_path / "ledger.json")
    for n in range(1, sweep.ATTEMPTS + 1):
        sweep.record(ledger, "2.13.0", sweep._record_failure(f"timed out after 900 s (try {n})", sweep.now()))
        release = load(ledger)["releases"]["2.13.0"]
        assert release["bugs"][A_BUG]["dynamic"] == CONFIRMED
        assert ("error" in release) == (n < sweep.ATTEMPTS) and ("unmeasurable" in release) == (n == sweep.ATTEMPTS)
    assert release["unmeasurable"].endswith(f"the last: timed out after 900 s (try {sweep.ATTEMPTS})")
    options = sweep.Options(ledger=ledger)
    releases = [Release(Version("2.13.0"), ())]
    assert sweep.select(releases, load(ledger)["releases"], options) == []  # final: not retried
    assert sweep.select(releases, load(ledger)["releases"], sweep.Options(ledger=ledger, recheck=True)) == releases
    sweep.record(ledger, "2.13.0", sweep._record_dynamic(_attempt("fixed", "0 of 14 runs show it")))
    release = load(ledger)["releases"]["2.13.0"]
    assert not {"error", "failed_attempts", "unmeasurable"} & set(release)
    assert release["bugs"][A_BUG]["dynamic"]["verdict"] == "fixed"


def test_a_report_that_says_cannot_test_is_recorded(tmp_path):
    """TorchScript unusable is a measurement (the removal signal), unlike a run without a report."""
    ledger = _confirmed_ledger(tmp_path / "ledger.json")
    sweep.record(ledger, "2.13.0", sweep._record_dynamic(_attempt("cannot-test", "TorchScript is unusable here")))
    assert load(ledger)["releases"]["2.13.0"]["bugs"][A_BUG]["dynamic"]["verdict"] == "cannot-test"


@pytest.mark.parametrize(
    "detail",
    [
        "installing torch 2.16.0 failed: ERROR: No matching distribution",
        "timed out after 900 s",
        "the reproducer printed no report: Killed",
    ],
)
def test_stored_cannot_test_from_a_failed_install_reads_as_an_error(tmp_path, detail):
    """What earlier versions stored for a run without a report is migrated on read: retried, not a status."""
    path = tmp_path / "ledger.json"
    stored = {"verdict": "cannot-test", "detail": detail, "checked_at": "2026-12-01T00:00:00+00:00"}
    path.write_text(
        json.dumps(
            {
                "schema": 2,
                "bugs": {},
                "releases": {
                    "2.16.0": {"bugs": {A_BUG: {"static": {"verdict": "present", "evidence": []}, "dynamic": stored}}}
                },
            }
        )
    )
    data = load(path)
    release = data["releases"]["2.16.0"]
    assert "dynamic" not in release["bugs"][A_BUG] and release["error"] == detail
    assert release["failed_attempts"] == [{"checked_at": stored["checked_at"], "detail": detail}]
    assert expectation_for(data, "2.16.0", A_BUG).outcome == "present"
    assert sweep.select([Release(Version("2.16.0"), ())], data["releases"], sweep.Options(ledger=path))


@pytest.mark.slow  # builds wheels and runs the check in a fresh interpreter (1.5 s)
@pytest.mark.parametrize("api", ["", "/simple/"], ids=["json-api", "simple"])
def test_local_builds_are_one_release_under_its_public_key(index, tmp_path, api):
    """``2.13.0+cpu`` and ``2.13.0+cu126`` are wheels of 2.13.0 (beside the plain one the fixture serves):
    one ledger key, the one ``repro`` reads."""
    for local in ("+cpu", "+cu126"):
        index.wheels[f"torch-2.13.0{local}-cp311-cp311-manylinux_2_28_x86_64.whl"] = build_wheel(BUGGY, padding=1024)
    index.wheels["torch-2.14.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"] = build_wheel(BUGGY, padding=1024)
    ledger = write_ledger(tmp_path / "ledger.json")
    proc = check_upstream_cli(index.url + api, "--json", ledger=ledger)
    report, data = json.loads(proc.stdout), load(ledger)
    assert proc.returncode == 0, proc.stderr
    assert [r["version"] for r in report["releases"]] == ["2.13.0", "2.14.0"] and list(data["releases"]) == [
        ledger_release_key("2.13.0+cpu"),
        ledger_release_key("2.14.0+cpu"),
    ]
    assert "2 releases listed, 2 to check" in proc.stderr
    again = check_upstream_cli(index.url + api, ledger=ledger)
    assert again.returncode == 0 and "2 releases listed, 0 to check" in again.stderr  # known under that key


@pytest.mark.slow
def test_versions_named_short_install_a_local_build_recorded_under_its_public_key(index, tmp_path):
    """``--versions 9.9`` installs the index's ``9.9.0+cpu`` (``torch==9.9`` matches it) and records it
    under ``9.9.0``, the key ``repro`` computes for that installed torch."""
    for name, data in (packaging_wheel(), spy_torch("9.9.0+cpu", reproducer_report("a local build"))):
        index.wheels[name] = data
    ledger = write_ledger(tmp_path / "ledger.json")
    proc = check_upstream_cli(
        index.url, "--versions", "9.9", "--json", "--install-index-url", f"{index.url}/simple/", ledger=ledger
    )
    report, stored = json.loads(proc.stdout), load(ledger)
    assert proc.returncode == 0, proc.stderr
    assert [r["version"] for r in report["releases"]] == list(stored["releases"]) == [ledger_release_key("9.9.0+cpu")]
    assert stored["releases"]["9.9.0"]["bugs"][A_BUG]["dynamic"]["detail"] == "a local build"


@pytest.mark.parametrize(
    ("named", "key"),
    [
        ("2.13", "2.13.0"),
        ("2.13.0", "2.13.0"),
        ("2.13.0+cpu", "2.13.0"),
        ("2.13+cu126", "2.13.0"),
        ("2.13.0.0", "2.13.0"),
        ("2.14rc1", "2.14.0rc1"),
        ("2.16.0.dev20260101+cpu", "2.16.0.dev20260101"),
        ("2.13.0.1", "2.13.0.1"),
    ],
)
def test_one_key_per_public_release(named, key):
    assert ledger_release_key(named) == key
    assert ledger_release_key(f"{key}+cpu") == key  # what `repro` reads for that torch installed


def test_versions_naming_one_release_twice_install_it_once():
    assert parse_args(["--versions", "2.13,2.13.0,2.14"]).versions == [Version("2.13"), Version("2.14")]


@pytest.mark.slow  # two checks over a 4 MB index (seconds)
def test_a_4_mb_url_in_the_index_leaves_a_ledger_both_programs_read(index, tmp_path):
    """Text from the index is stored capped (``TEXT_CAP``), so one hostile entry cannot make the ledger
    too large to read back; ``python -m repro`` and the next check both read it."""
    name = "torch-2.16.0-cp311-cp311-manylinux_2_28_x86_64.whl"
    index.raw_index = json.dumps(
        {
            "info": {"name": "torch"},
            "releases": {
                "2.16.0": [
                    {
                        "filename": name,
                        "url": "../../files/" + "a" * 4_000_000 + "/" + name,
                        "size": 10,
                        "yanked": False,
                    }
                ]
            },
        }
    ).encode()
    code, report, ledger, _ = check(index, tmp_path)
    release = ledger["releases"]["2.16.0"]
    assert code == 1 and len(report["errors"][0]) > TEXT_CAP  # the run's own report says it all ...
    assert release["error"].endswith(CUT) and len(release["error"]) == TEXT_CAP  # ... the ledger keeps it capped
    path = tmp_path / "ledger.json"
    assert path.stat().st_size < 100_000 and load(path)["releases"]["2.16.0"]["error"] == release["error"]
    assert check(index, tmp_path)[0] == 1  # read back, retried
    proc = run(["-m", "repro", "--list-bugs"], ledger=path)
    assert proc.returncode == 0, proc.stderr


def test_a_write_the_reader_would_refuse_is_refused_and_the_ledger_kept(index, tmp_path, monkeypatch):
    """A ledger near the limit plus one more release: the write is one sentence (exit 2), and the file
    stays as the previous write left it. The limit is configured small here; reads and writes share it."""
    path = _confirmed_ledger(tmp_path / "ledger.json")
    before = path.read_bytes()
    monkeypatch.setattr(ledger_io, "MAX_BYTES", len(before) + 200)
    index.wheels["torch-2.14.0-cp311-cp311-manylinux_2_28_x86_64.whl"] = build_wheel(BUGGY, padding=1024)
    code, report, ledger, stderr = check(index, tmp_path)  # one ordinary new release more
    assert code == 2 and report is None and path.read_bytes() == before
    assert stderr.strip().splitlines()[-1].startswith(f"check_upstream: error: the ledger {path} was not written")
    assert "Traceback" not in stderr and load(path)
