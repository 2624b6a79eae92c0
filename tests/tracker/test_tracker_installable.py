"""What the tracker cannot install, and what is not a try (issue 27, item 2): a release with no wheel for
the runner's interpreter is known from the install index's file list before any install; an index that
does not answer, a second local variant in one run and a short ``--timeout`` are errors of the run,
never one of the 3 tries after which a release is unmeasurable."""

from __future__ import annotations

import json
import socket

import pytest
from index_server import IndexServer, build_pure_wheel
from tracker_helpers import packaging_wheel, tracker

from helpers import write_ledger
from repro.ledger import load
from tracker import sweep
from tracker.index import installability, runner_tag
from tracker.remote import FetchError, Traffic, make_session

CRASH = {"torch/__init__.py": b"import os\nos._exit(1)\n"}  # a torch whose import dies: no report


@pytest.fixture
def index():
    server = IndexServer()
    server.url = server.start()
    yield server
    server.stop()


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_the_file_list_says_which_interpreter_tags_a_release_has(index):
    index.wheels["torch-1.4.0-cp37-cp37m-manylinux1_x86_64.whl"] = b"x"
    index.wheels["torch-1.4.0-cp38-cp38-manylinux1_x86_64.whl"] = b"x"
    index.wheels["torch-2.13.0-py3-none-any.whl"] = b"x"
    old = installability(make_session(), f"{index.url}/simple/", "1.4.0", Traffic())
    assert not old.installable and old.wheel_tags == ("cp37-cp37m", "cp38-cp38") and old.tag == runner_tag()
    assert installability(make_session(), f"{index.url}/simple/", "2.13", Traffic()).installable
    missing = installability(make_session(), f"{index.url}/simple/", "9.9.9", Traffic())
    assert missing.installable and missing.wheel_tags == ()  # no file there decides nothing: pip is asked
    with pytest.raises(FetchError, match="cannot reach 127.0.0.1"):
        installability(make_session(), f"http://127.0.0.1:{closed_port()}/simple/", "2.13.0", Traffic())


def test_an_index_outage_on_three_runs_is_never_a_try(tmp_path):
    """Before: each run tried pip against the dead index and counted a try; the third marked the release
    unmeasurable for good."""
    ledger = write_ledger(tmp_path / "ledger.json")
    dead = f"http://127.0.0.1:{closed_port()}/simple/"
    for _ in range(sweep.ATTEMPTS):
        code, out, err = tracker("--versions", "2.13.0", "--install-index-url", dead, "--ledger", str(ledger), "--json")
        assert code == 1 and "Traceback" not in err
        report = json.loads(out)
        assert report["unmeasurable"] == [] and len(report["errors"]) == 1
        assert "the install index did not answer, so nothing was tried" in report["errors"][0]
    release = load(ledger)["releases"]["2.13.0"]
    assert "unmeasurable" not in release and "failed_attempts" not in release and "error" in release


def test_a_release_without_a_wheel_for_this_interpreter_is_not_installed_and_not_an_error(index, tmp_path):
    index.wheels["torch-1.4.0-cp37-cp37m-manylinux1_x86_64.whl"] = b"never downloaded"
    ledger = write_ledger(tmp_path / "ledger.json")
    code, out, err = tracker(
        "--versions", "1.4.0", "--install-index-url", f"{index.url}/simple/", "--ledger", str(ledger), "--json"
    )
    report = json.loads(out)
    assert code == 0 and report["errors"] == [] and report["unmeasurable"] == [], err
    assert report["not_installable"] == [f"1.4.0: no wheel for {runner_tag()} (wheels for: cp37-cp37m)"]
    assert "confirming" not in err
    assert [path for path in index.hits if path.startswith("/files/")] == []
    assert load(ledger)["releases"]["1.4.0"]["not_installable"]["wheel_tags"] == ["cp37-cp37m"]


def test_not_installable_is_decided_again_for_another_interpreter_tag(tmp_path):
    ledger = write_ledger(tmp_path / "ledger.json")
    entry = {"bugs": {}, "not_installable": {"tag": runner_tag(), "wheel_tags": ["cp37-cp37m"], "checked_at": "x"}}
    from packaging.version import Version

    from tracker.index import Release

    releases = [Release(Version("1.4.0"), ())]
    options = sweep.Options(ledger=ledger, install=True)
    assert sweep.select(releases, {"1.4.0": entry}, options) == []  # final for this tag
    other = {**entry, "not_installable": {**entry["not_installable"], "tag": "cp37-cp37m-manylinux1_x86_64"}}
    assert sweep.select(releases, {"1.4.0": other}, options) == releases  # the runner's tag changed


def test_a_run_cut_by_a_short_timeout_is_not_a_try(index, tmp_path):
    """``--timeout 0.2`` kills the environment's creation: before, that counted as one of the 3 tries."""
    name, data = build_pure_wheel("torch", "2.13.0", CRASH)
    index.wheels[name] = data
    ledger = write_ledger(tmp_path / "ledger.json")
    install = ["--install-index-url", f"{index.url}/simple/", "--ledger", str(ledger), "--json"]
    code, out, err = tracker("--versions", "2.13.0", "--timeout", "0.2", *install)
    report = json.loads(out)
    assert code == 1 and "under --timeout 0.2 (not a try)" in report["errors"][0], err
    assert "failed_attempts" not in load(ledger)["releases"]["2.13.0"]


@pytest.mark.slow
def test_local_variants_of_one_release_are_one_try_per_run(index, tmp_path):
    """``--versions 2.13.0+cpu,2.13.0+cu126``: both install and crash; before, that was two of the 3 tries
    in one run."""
    for local in ("cpu", "cu126"):
        name, data = build_pure_wheel("torch", f"2.13.0+{local}", CRASH)
        index.wheels[name] = data
    index.wheels.update([packaging_wheel()])
    ledger = write_ledger(tmp_path / "ledger.json")
    code, out, err = tracker(
        "--versions",
        "2.13.0+cpu,2.13.0+cu126",
        "--install-index-url",
        f"{index.url}/simple/",
        "--ledger",
        str(ledger),
        "--json",
    )
    report = json.loads(out)
    assert code == 1 and len(report["errors"]) == 2, err
    assert "a second local variant of 2.13.0 in one run: not another try" in report["errors"][1]
    assert len(load(ledger)["releases"]["2.13.0"]["failed_attempts"]) == 1
