"""The tracker's CLI and index readers against bad input (issue 8, items 12, 16, 17): index answers of
the wrong shape, bad URLs and options, an unwritable step summary, and errors next to a status change.

Bad input is one sentence on stderr and a documented exit code, never a traceback.
"""

from __future__ import annotations

import json

import pytest
from index_server import BUGGY, FIXED_IGNORED, IndexServer, build_wheel
from tracker_helpers import check, check_upstream_cli, verdicts, wheel_name

from helpers import first_quick, write_ledger
from repro.ledger import load
from tracker.remote import make_session
from tracker.upstream_issue import issue_state

WHEEL = wheel_name("2.13.0")
GOOD = {"filename": WHEEL, "url": f"../../files/{WHEEL}"}
DEEP = b"[" * 100_000 + b"]" * 100_000  # RecursionError in json.loads
ISSUE = "/repos/pytorch/pytorch/issues/1"


@pytest.fixture
def index():
    server = IndexServer()
    server.url = server.start()
    server.wheels[WHEEL] = build_wheel(BUGGY, padding=1024)
    yield server
    server.stop()


def one_line(stderr: str) -> bool:
    return len(stderr.strip().splitlines()) == 1 and "Traceback" not in stderr


# 12. Index answers of the wrong shape: an entry that cannot name a wheel is skipped, like an sdist.


@pytest.mark.parametrize(
    ("api", "entry"),
    [
        ("/", {"filename": 5, "url": "x.whl"}),
        ("/", {"filename": WHEEL, "url": 5}),
        ("/", {"filename": WHEEL, "url": "http://[::1/"}),
        ("/simple/", {"filename": [WHEEL], "url": "x.whl"}),
        ("/", {**GOOD, "size": "big"}),
    ],
    ids=["filename-number", "url-number", "url-bad-ipv6", "pep691-filename-list", "size-not-a-number"],
)
def test_index_entries_of_the_wrong_shape_are_skipped(index, tmp_path, api, entry):
    files = [entry, GOOD]
    index.raw_index = json.dumps({"files": files} if api == "/simple/" else {"releases": {"2.13.0": files}}).encode()
    code, report, _, stderr = check(index, tmp_path, url=index.url + api)
    assert code == 0 and "Traceback" not in stderr
    assert verdicts(report) == {"2.13.0": "present"} and isinstance(report["releases"][0]["probe"]["wheel_size"], int)


@pytest.mark.parametrize("api", ["/", "/simple/"])
def test_deeply_nested_index_json_is_one_sentence_exit_1(index, tmp_path, api):
    index.raw_index = DEEP
    code, report, _, stderr = check(index, tmp_path, url=index.url + api)
    assert code == 1 and report is None and one_line(stderr) and "nested too deeply" in stderr


def test_deeply_nested_issue_json_is_unknown(index):
    index.issues[ISSUE] = DEEP
    state = issue_state(make_session(), index.url, "pytorch/pytorch#1", "now")
    assert state["state"] == "unknown" and "nested too deeply" in state["error"]


def test_issue_fields_that_are_not_strings_are_not_stored(index):
    index.issues[ISSUE] = {"state": {"open": True}, "state_reason": ["x"], "closed_at": 5, "title": {"a": 1}}
    state = issue_state(make_session(), index.url, "pytorch/pytorch#1", "now")
    assert state == {"state": "unknown", "state_reason": None, "closed_at": None, "title": None, "checked_at": "now"}


# 12. Bad URLs and option values are usage errors.


@pytest.mark.parametrize(
    "args",
    [
        ["--index-url", "http://[::1"],
        ["--index-url", "https://a..b/"],
        ["--github-api-url", "https://a..b/", "--upstream-issue", "pytorch/pytorch#1"],
        ["--github-api-url", "ftp://127.0.0.1/"],
    ],
    ids=["index-bad-ipv6", "index-empty-label", "api-empty-label", "api-unused-but-bad"],
)
def test_bad_urls_are_usage(index, tmp_path, args):
    code, report, ledger, stderr = check(index, tmp_path, *args)
    assert code == 2 and report is None and one_line(stderr) and "refusing" in stderr
    assert ledger["releases"] == {} and "upstream_issues" not in ledger


@pytest.mark.parametrize(
    "args",
    [
        ["--versions", ","],
        ["--versions="],
        ["--versions", " , "],
        ["--timeout", "nan"],
        ["--timeout", "-1"],
        ["--timeout", "0"],
        ["--timeout", "inf"],
        ["--timeout", "soon"],
        ["--versions", "2.13.0", "--since", "1.8"],
        ["--versions", "2.13.0", "--pre"],
        ["--versions", "2.13.0", "--recheck"],
    ],
    ids=[
        "versions-comma",
        "versions-empty",
        "versions-blank",
        "timeout-nan",
        "timeout-negative",
        "timeout-zero",
        "timeout-inf",
        "timeout-word",
        "versions-since",
        "versions-pre",
        "versions-recheck",
    ],
)
def test_bad_option_values_are_usage(index, tmp_path, args):
    code, report, ledger, stderr = check(index, tmp_path, *args)
    assert code == 2 and report is None and "Traceback" not in stderr and "usage:" in stderr
    assert ledger["releases"] == {} and not index.hits  # nothing swept, nothing installed


# 16. A status change wins over errors; the errors are still listed.


def test_a_status_change_is_exit_3_even_when_another_release_fails(index, tmp_path):
    index.wheels[wheel_name("2.12.0")] = build_wheel(BUGGY, padding=1024)  # present: the predecessor
    index.wheels[WHEEL] = build_wheel(FIXED_IGNORED, padding=1024)
    index.extra["2.14.0"] = [wheel_name("2.14.0")]  # listed, but the file answers 404
    code, report, ledger, stderr = check(index, tmp_path)
    assert code == 3 and report["status_changed"] is True
    assert verdicts(report) == {"2.12.0": "present", "2.13.0": "changed", "2.14.0": "unknown"}
    assert [e.split(":")[0] for e in report["errors"]] == ["2.14.0"] and "error" in ledger["releases"]["2.14.0"]
    proc = check_upstream_cli(index.url, ledger=tmp_path / "ledger.json")
    assert proc.returncode == 1 and "error: 2.14.0: " in proc.stdout  # the change is recorded: only the error


def test_errors_alone_are_still_exit_1(index, tmp_path):
    index.extra["2.14.0"] = [wheel_name("2.14.0")]
    code, report, _, _ = check(index, tmp_path)
    assert code == 1 and report["status_changed"] is False and len(report["errors"]) == 1


# 17. An unwritable step summary is a one-line warning; the exit code stands.


@pytest.mark.parametrize("where", first_quick(["directory", "missing-folder"]))
def test_unwritable_step_summary_warns_and_keeps_the_exit_code(index, tmp_path, where):
    index.wheels[wheel_name("2.12.0")] = build_wheel(BUGGY, padding=1024)
    index.wheels[WHEEL] = build_wheel(FIXED_IGNORED, padding=1024)
    summary = tmp_path if where == "directory" else tmp_path / "missing" / "summary.md"
    proc = check_upstream_cli(
        index.url, ledger=write_ledger(tmp_path / "ledger.json"), env={"GITHUB_STEP_SUMMARY": str(summary)}
    )
    assert proc.returncode == 3 and "changed: full-backward-hook-flag: 2.13.0: present -> changed" in proc.stdout
    assert "Traceback" not in proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if "GITHUB_STEP_SUMMARY" in line]
    assert len(warnings) == 1 and warnings[0].startswith("check_upstream: warning: ")


# Issue 43, item 5: a version past Python's digit limit on the index is skipped, on the command line usage.

HUGE = "1" + "0" * 5000


def test_a_release_or_wheel_with_a_huge_version_is_skipped(index, tmp_path):
    huge_wheel = f"torch-{HUGE}-cp311-cp311-manylinux_2_28_x86_64.whl"
    releases = {"2.13.0": [GOOD], HUGE: [{"filename": huge_wheel, "url": f"../../files/{huge_wheel}"}]}
    index.raw_index = json.dumps({"releases": releases}).encode()
    code, report, _, stderr = check(index, tmp_path, url=index.url + "/")
    assert code == 0 and "Traceback" not in stderr, stderr
    assert verdicts(report) == {"2.13.0": "present"}


def test_a_huge_since_is_usage(index, tmp_path):
    code, report, _, stderr = check(index, tmp_path, "--since", HUGE)
    assert code == 2 and report is None and "Traceback" not in stderr and "not a version" in stderr


# Issue 43, item 12: --init leaves a ledger even when there is nothing to check; a refused file keeps no lock.


def test_init_with_nothing_to_check_still_creates_the_ledger(index, tmp_path):
    """Before: exit 0 and no ledger at the path --init named."""
    index.raw_index = json.dumps({"releases": {}}).encode()  # the index lists nothing
    new = tmp_path / "new" / "ledger.json"
    new.parent.mkdir()
    code, report, _, stderr = check(index, tmp_path, "--ledger", str(new), "--init", url=index.url + "/")
    assert code == 0, stderr
    assert new.exists() and load(new)["releases"] == {} and report["releases"] == []


def test_a_file_refused_as_no_ledger_keeps_no_lock_beside_it(tmp_path, capsys):
    from tracker import device_report

    mine = tmp_path / "notes.json"
    mine.write_text("my notes, not a ledger")
    report = tmp_path / "report.json"
    row = {"api": "to", "cell": "works", "codes": ["ok"], "left_out": 0, "outcomes": []}
    fields = {"schema": 1, "torch_version": "2.13.0", "python_version": "3.11", "platform": "p", "device": "npu"}
    report.write_text(json.dumps({**fields, "codes": [], "scenario_table": "t", "rows": [row]}))
    assert device_report.main([str(report), "--device", "npu", "--torch", "2.13.0", "--ledger", str(mine)]) == 2
    assert "is not valid JSON" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.json", "report.json"]
