"""The upstream tracker against a real HTTP server on loopback serving wheels built here."""

from __future__ import annotations

import json
import sys

import pytest
from index_server import (
    BUGGY,
    FIXED_IGNORED,
    FIXED_MODULE,
    FIXED_SETATTR,
    REMOVED_GONE,
    REMOVED_RAISES,
    Faults,
    build_pure_wheel,
    build_wheel,
    shape,
)
from tracker_helpers import (
    change_lines,
    check,
    check_upstream_cli,
    packaging_wheel,
    status_change,
    verdicts,
    wheel_name,
)

from helpers import A_BUG, ROOT, flag, run, write_ledger
from repro.catalogue import BUGS
from tracker import summary
from tracker.history import Change, changes, recompute
from tracker.sweep import Outcome


def test_buggy_release_is_present_from_a_sliver_of_the_wheel(index, tmp_path):
    index.wheels[wheel_name("2.13.0")] = build_wheel(BUGGY, padding=16 * 1024 * 1024)
    code, report, ledger, _ = check(index, tmp_path)
    assert code == 0 and report["status_changed"] is False
    static, probe = flag(report["releases"][0])["static"], report["releases"][0]["probe"]
    assert static["verdict"] == "present" and probe["requests"] <= 10
    assert probe["bytes_fetched"] <= 0.01 * probe["wheel_size"]
    assert any("_recursive.py:1" in e for e in static["evidence"]), static["evidence"]
    assert flag(ledger["releases"]["2.13.0"])["static"]["verdict"] == "present"
    assert ledger["bugs"][A_BUG]["fixed_in"] is None
    assert set(ledger["releases"]["2.13.0"]["bugs"]) == set(BUGS)  # one read of the wheel serves every bug


@pytest.mark.parametrize(
    ("sources", "verdict", "evidence"),
    [
        (FIXED_IGNORED, "changed", "ignored_attributes now lists"),
        (FIXED_SETATTR, "changed", "special-cases"),
        (FIXED_MODULE, "changed", "no longer assigns"),
        (REMOVED_RAISES, "removed", "script_method now raises"),
        (REMOVED_GONE, "removed", "no longer defined"),
        (
            shape(
                **{
                    "torch/jit/_script.py": BUGGY["torch/jit/_script.py"].replace(
                        "def script_method(fn):\n",
                        "def script_method(fn):\n    if not os.environ.get('TORCH_JIT_OPT_IN'):\n"
                        "        raise RuntimeError('TorchScript was removed')\n",
                    )
                }
            ),
            "removed",
            "script_method now raises",
        ),
        (
            shape(
                **{
                    "torch/jit/_script.py": BUGGY["torch/jit/_script.py"].replace(
                        "def script_method(fn):\n",
                        "def script_method(fn):\n    if not callable(fn):\n"
                        "        raise TypeError('script_method decorates a function')\n",
                    )
                }
            ),
            "present",
            "ignored_attributes lacks",
        ),
        (shape(**{"torch/jit/_script.py": ""}), "unknown", "missing from the wheel"),
        (shape(**{"torch/nn/modules/module.py": "def broken(:\n"}), "unknown", "unparsable"),
    ],
    ids=[
        "fixed-ignored",
        "fixed-setattr",
        "fixed-module",
        "removed-raises",
        "removed-gone",
        "removed-unless-opted-in",
        "argument-check-is-not-removal",
        "member-missing",
        "unparsable",
    ],
)
def test_static_verdicts_with_evidence(index, tmp_path, sources, verdict, evidence):
    index.wheels[wheel_name("2.15.0")] = build_wheel(BUGGY)  # the predecessor a new status is compared with
    index.wheels[wheel_name("2.16.0")] = build_wheel(sources)
    code, report, ledger, _ = check(index, tmp_path)
    static = flag(next(r for r in report["releases"] if r["version"] == "2.16.0"))["static"]
    assert static["verdict"] == verdict, static["evidence"]
    assert any(evidence in e for e in static["evidence"]), static["evidence"]
    assert code == (3 if verdict in ("changed", "removed") else 0)
    assert ledger["bugs"][A_BUG]["fixed_in"] is None  # never "fixed" on static evidence alone


def test_second_run_makes_no_wheel_requests(index, tmp_path):
    index.wheels[wheel_name("2.13.0")] = build_wheel(BUGGY)
    check(index, tmp_path)
    wheel_hits = sum(n for path, n in index.hits.items() if path.startswith("/files/"))
    code, report, _, _ = check(index, tmp_path)
    assert code == 0 and report["releases"] == []
    assert sum(n for path, n in index.hits.items() if path.startswith("/files/")) == wheel_hits
    check(index, tmp_path, "--recheck")
    assert sum(n for path, n in index.hits.items() if path.startswith("/files/")) > wheel_hits


@pytest.mark.parametrize("render", [summary.text, summary.markdown], ids=["text", "markdown"])
def test_summary_says_when_there_was_nothing_new_to_check(render):
    lines = render(Outcome(), {"fixed_in": None}, []).splitlines()
    assert summary.NOTHING_NEW in lines
    assert [line for line in lines if line.startswith(("release", "| release"))] == []


@pytest.mark.parametrize("simple", ["json", "html"])
def test_simple_index_yanked_and_pre_releases(index, tmp_path, simple):
    for version in ("2.12.0", "2.13.0", "2.14.0rc1"):
        index.wheels[wheel_name(version)] = build_wheel(BUGGY, padding=1024)
    index.yanked.add(wheel_name("2.12.0"))
    index.html_only = simple == "html"
    code, report, ledger, _ = check(index, tmp_path, url=f"{index.url}/simple/")
    assert verdicts(report) == {"2.12.0": "yanked", "2.13.0": "present"}
    assert ledger["releases"]["2.12.0"]["yanked"] is True
    code, report, _, _ = check(index, tmp_path, "--pre", url=f"{index.url}/simple")
    assert verdicts(report) == {"2.14.0rc1": "present"}


def test_since_limits_the_sweep(index, tmp_path):
    for version in ("1.7.1", "1.8.0", "2.0.0"):
        index.wheels[wheel_name(version)] = build_wheel(BUGGY, padding=1024)
    _, report, _, _ = check(index, tmp_path, "--since", "1.8")
    assert set(verdicts(report)) == {"1.8.0", "2.0.0"}


def test_prefers_linux_x86_64_wheel(index, tmp_path):
    index.wheels[wheel_name("2.13.0", "cp311-none-macosx_11_0_arm64")] = build_wheel(FIXED_IGNORED, 1024)
    index.wheels[wheel_name("2.13.0")] = build_wheel(BUGGY, 1024)
    _, report, _, _ = check(index, tmp_path)
    assert report["releases"][0]["probe"]["wheel"] == wheel_name("2.13.0")


@pytest.mark.parametrize("kind", ["json-api", "simple"])
def test_release_without_wheel_is_unknown_through_either_index(index, tmp_path, kind):
    """An sdist-only release: the JSON API lists it as a release; the simple index only by its file."""
    index.extra["2.13.0"] = ["torch-2.13.0.tar.gz"]
    url = index.url if kind == "json-api" else f"{index.url}/simple/"
    code, report, _, _ = check(index, tmp_path, url=url)
    assert verdicts(report) == {"2.13.0": "unknown"} and code == 0
    assert flag(report["releases"][0])["static"]["evidence"] == ["the release has no wheel"]


def test_ranges_unsupported_stops_at_once_unless_full_download_allowed(index, tmp_path):
    index.wheels[wheel_name("2.13.0")] = build_wheel(BUGGY)
    index.faults = Faults(ranges=False)
    code, report, ledger, _ = check(index, tmp_path)
    static = flag(report["releases"][0])["static"]
    assert code == 1 and static["verdict"] == "unknown" and "ignores Range" in static["evidence"][0]
    assert report["releases"][0]["probe"]["bytes_fetched"] < 1024 * 1024  # stopped, not downloaded
    assert "2.13.0" in ledger["releases"]  # recorded, and retried next time
    code, report, _, _ = check(index, tmp_path, "--full-download")
    assert code == 0 and verdicts(report) == {"2.13.0": "present"}


@pytest.mark.parametrize(
    ("faults", "code", "verdict"),
    [
        (Faults(suffix=False), 0, "present"),
        (Faults(fail_first=2), 0, "present"),
        (Faults(reset_once=True), 0, "present"),
        (Faults(reset_index_once=True), 0, "present"),
        (Faults(gzip=True), 1, "unknown"),
    ],
    ids=["suffix-rejected", "503-retried", "reset-retried", "index-reset-retried", "gzip-refused"],
)
def test_server_faults(index, tmp_path, faults, code, verdict):
    index.wheels[wheel_name("2.13.0")] = build_wheel(BUGGY)
    index.faults = faults
    got, report, _, _ = check(index, tmp_path)
    assert (got, verdicts(report)["2.13.0"]) == (code, verdict)


def test_broken_central_directory_is_unknown(index, tmp_path):
    data = bytearray(build_wheel(BUGGY, padding=1024))
    end = data.rfind(b"PK\x05\x06")
    data[end + 16 : end + 20] = (len(data) + 999).to_bytes(4, "little")  # directory offset past the end
    index.wheels[wheel_name("2.13.0")] = bytes(data)
    code, report, _, _ = check(index, tmp_path)
    static = flag(report["releases"][0])["static"]
    assert static["verdict"] == "unknown" and "unreadable" in static["evidence"][0]


@pytest.mark.parametrize(
    ("api", "body", "says"),
    [
        ("/", b"{not json", "malformed JSON"),
        ("/simple/", b"{not json", "malformed JSON"),
        ("/", b"[]", "not a JSON API answer"),
        ("/", b'{"releases": {"2.13.0": null}}', "not a JSON API answer"),
        ("/simple/", b"[]", "not a PEP 691 answer"),
        ("/simple/", b'{"files": null}', "not a PEP 691 answer"),
    ],
    ids=["api-not-json", "simple-not-json", "api-list", "api-null-files", "simple-list", "simple-bad-files"],
)
def test_malformed_index_answer_is_one_sentence_exit_1(index, tmp_path, api, body, says):
    index.raw_index = body
    code, report, _, stderr = check(index, tmp_path, url=index.url + api)
    assert code == 1 and report is None and says in stderr and "Traceback" not in stderr
    assert len(stderr.strip().splitlines()) == 1


def test_non_loopback_http_is_refused(tmp_path):
    write_ledger(tmp_path / "ledger.json")
    proc = check_upstream_cli("http://example.com", ledger=tmp_path / "ledger.json")
    assert proc.returncode == 2 and "only https" in proc.stderr


def test_runs_as_a_script_and_writes_the_step_summary(index, tmp_path):
    index.wheels[wheel_name("2.13.0")] = build_wheel(BUGGY, padding=1024)
    summary = tmp_path / "summary.md"
    write_ledger(tmp_path / "ledger.json")
    proc = run(
        [str(ROOT / "tracker" / "check_upstream.py"), "--index-url", index.url],
        ledger=tmp_path / "ledger.json",
        env={"GITHUB_STEP_SUMMARY": str(summary)},
        cwd=tmp_path,
    )
    assert (
        proc.returncode == 0
        and "2.13.0" in proc.stdout
        and "[1/1] 2.13.0: full-backward-hook-flag: present" in proc.stderr
    )
    assert "| 2.13.0 | full-backward-hook-flag | present |" in summary.read_text()


def test_fixed_in_is_the_lowest_confirmed_fix_and_regressions_are_recorded():
    data = {
        "bugs": {},
        "releases": {
            v: {"bugs": {A_BUG: {"dynamic": {"verdict": d}}}}
            for v, d in [("2.13.0", "present"), ("2.16.0", "fixed"), ("2.17.0", "present"), ("2.18.0", "fixed")]
        },
    }
    recompute(data)
    assert data["bugs"][A_BUG] == {"fixed_in": "2.16.0", "regressions": ["2.17.0"]}
    assert data["bugs"]["module-compile-noop"] == {"fixed_in": None, "regressions": []}  # per bug


@pytest.mark.slow
def test_versions_install_each_torch_in_a_throwaway_environment(index, tmp_path):
    """The dynamic path end to end: venv, pip from the loopback index, the reproducer, cleanup.

    The torch served here cannot be imported, so the reproducer prints no report (an environment error,
    exit 2): an error of the release, never a verdict (never fixed, never cannot-test); a version the
    index lacks fails to install and is an error the same way. Both are retried next run.
    """
    for name, data in (
        packaging_wheel(),
        build_pure_wheel("torch", "9.9.9", {"torch/__init__.py": b"raise ImportError('a torch that cannot load')\n"}),
    ):
        index.wheels[name] = data
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    code, report, ledger, stderr = check(
        index,
        tmp_path,
        "--versions",
        "9.9.9,9.9.8",
        "--install-index-url",
        f"{index.url}/simple/",
        env={"TMPDIR": str(scratch)},
    )
    assert code == 1, stderr
    errors = {version: ledger["releases"][version]["error"] for version in ("9.9.9", "9.9.8")}
    assert "torch cannot be imported: ImportError: a torch that cannot load" in errors["9.9.9"]
    assert "installing torch 9.9.8 failed" in errors["9.9.8"]
    assert report["errors"] == [f"{v}: {e}" for v, e in errors.items()] and not report["changes"]
    assert [b for b, v in ledger["releases"]["9.9.9"].get("bugs", {}).items() if "dynamic" in v] == []
    assert ledger["bugs"][A_BUG]["fixed_in"] is None
    assert list(scratch.iterdir()) == []  # environments removed


def test_upstream_issue_state_is_recorded_and_the_token_never_shown(index, tmp_path):
    index.issues["/repos/pytorch/pytorch/issues/181473"] = {
        "state": "closed",
        "state_reason": "not_planned",
        "closed_at": "2026-08-07T00:00:00Z",
        "title": "bug",
    }
    code, report, ledger, stderr = check(
        index,
        tmp_path,
        "--upstream-issue",
        "pytorch/pytorch#181473",
        "--github-api-url",
        index.url,
        env={"GITHUB_TOKEN": "s3cr3t-token"},
    )
    state = ledger["upstream_issues"]["pytorch/pytorch#181473"]
    assert code == 0 and (state["state"], state["state_reason"]) == ("closed", "not_planned")
    assert index.authorizations == ["Bearer s3cr3t-token"]
    assert "s3cr3t-token" not in stderr + json.dumps(report) + json.dumps(ledger)


@pytest.mark.parametrize(
    ("api", "error"),
    [(None, "404"), ("http://127.0.0.1:9", "the connection was refused")],
    ids=["not-found", "refused"],
)
def test_unreachable_upstream_issue_is_unknown_not_an_error(index, tmp_path, api, error):
    code, report, ledger, _ = check(
        index, tmp_path, "--upstream-issue", "pytorch/pytorch#1", "--github-api-url", api or index.url
    )
    assert code == 0 and ledger["upstream_issues"]["pytorch/pytorch#1"]["state"] == "unknown"
    assert error in ledger["upstream_issues"]["pytorch/pytorch#1"]["error"]


def test_bad_issue_reference_is_usage(index, tmp_path):
    code, _, _, stderr = check(index, tmp_path, "--upstream-issue", "181473")
    assert code == 2 and "owner/repo#123" in stderr


def test_text_summary_says_none_not_python_none():
    lines = summary.text(Outcome(), {"bugs": {A_BUG: {"fixed_in": None}}}, []).splitlines()
    assert f"{A_BUG}: fixed_in none (no release confirmed fixed)" in lines and "None" not in "\n".join(lines)


@pytest.mark.parametrize("jobs", ["0", "-1", "two"])
def test_jobs_must_be_a_positive_number(index, tmp_path, jobs):
    code, report, _, stderr = check(index, tmp_path, "--jobs", jobs)
    assert code == 2 and report is None and "not a positive whole number" in stderr


def test_unknown_upstream_issue_state_says_why_in_the_text_output(index, tmp_path):
    ledger = write_ledger(tmp_path / "ledger.json")
    proc = check_upstream_cli(
        index.url, "--upstream-issue", "pytorch/pytorch#1", "--github-api-url", index.url, ledger=ledger
    )
    said = " ".join(line.strip() for line in proc.stderr.splitlines())  # progress wraps at 100 columns
    assert proc.returncode == 0 and max(len(line) for line in proc.stderr.splitlines()) <= 100
    assert "pytorch/pytorch#1: unknown (GET " in said and "answered HTTP 404)" in said


def test_a_reader_that_stops_early_changes_neither_the_ledger_nor_the_exit_code(index, tmp_path):
    """``check_upstream --json | head -c 0``: no traceback, the release is recorded, exit 0 stands."""
    index.wheels[wheel_name("2.13.0")] = build_wheel(BUGGY)
    ledger = write_ledger(tmp_path / "ledger.json")
    script = (
        "import subprocess, sys; p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, "
        "stderr=subprocess.PIPE); p.stdout.close(); err = p.stderr.read(); "
        "print(p.wait()); sys.stderr.write(err.decode())"
    )
    proc = run(
        ["-c", script, sys.executable, "-m", "tracker.check_upstream", "--index-url", index.url, "--json"],
        ledger=ledger,
    )
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr
    assert proc.stdout.strip() == "0"
    assert flag(json.loads(ledger.read_text())["releases"]["2.13.0"])["static"]["verdict"] == "present"


def test_status_change_is_relative_to_the_ledger(index, tmp_path):
    """A first release has nothing to differ from; a recorded change is not a change again; a new
    release that agrees with its predecessor is not one either."""
    index.wheels[wheel_name("2.16.0")] = build_wheel(FIXED_IGNORED)
    first, report, _, _ = check(index, tmp_path)
    assert (first, report["changes"]) == (0, [])  # no earlier release to differ from
    index.wheels[wheel_name("2.17.0")] = build_wheel(BUGGY)
    code, report, _, _ = check(index, tmp_path)
    assert code == 3 and change_lines(report) == [f"{A_BUG}: 2.17.0: changed -> present"]
    assert report["changes"] == [status_change("2.17.0", "changed", "present")]  # a record, not a line
    again, report, _, _ = check(index, tmp_path, "--recheck")
    assert (again, report["changes"]) == (0, [])  # what the ledger already holds is no news


def test_bug_limits_a_run_to_that_bug(index, tmp_path):
    index.wheels[wheel_name("2.13.0")] = build_wheel(BUGGY)
    code, report, ledger, _ = check(index, tmp_path, "--bug", "module-compile-noop")
    assert code == 0 and set(ledger["releases"]["2.13.0"]["bugs"]) == {"module-compile-noop"}
    code, _, _, stderr = check(index, tmp_path, "--bug", "no-such-bug")
    assert code == 2 and "unknown bug id 'no-such-bug'" in stderr and "Traceback" not in stderr
    code, _, _, stderr = check(index, tmp_path, "--bug", "module-compile-nop")
    said = stderr.strip().splitlines()[-1]
    assert code == 2 and said.endswith("did you mean 'module-compile-noop'?") and len(said) <= 100, said


CONSTANT_FIX = shape(
    **{
        "torch/jit/_recursive.py": 'FULL_HOOK = "_is_full_backward_hook"\n'
        'ignored_attributes = [\n    "_version",\n    "_backward_hooks",\n    FULL_HOOK,\n]\n'
    }
)


def test_a_fix_the_pieces_cannot_see_is_changed_against_the_release_confirmed_present(index, tmp_path):
    """Naming the flag through a constant fixes the bug, yet every piece still reads as before; what the
    latest release confirmed present had, unchanged, is the test of ``present``."""
    assert BUGS[A_BUG].static(CONSTANT_FIX).verdict == "present"  # the pieces alone are fooled
    index.wheels[wheel_name("2.13.0")] = build_wheel(BUGGY, padding=1024)
    check(index, tmp_path)
    ledger_path = tmp_path / "ledger.json"
    ledger = json.loads(ledger_path.read_text())
    ledger["releases"]["2.13.0"]["bugs"][A_BUG]["dynamic"] = {
        "verdict": "present",
        "detail": "confirmed",
        "checked_at": "2026-12-01T00:00:00+00:00",
    }
    ledger_path.write_text(json.dumps(ledger))
    index.wheels[wheel_name("2.14.0")] = build_wheel(CONSTANT_FIX, padding=1024)
    index.wheels[wheel_name("2.14.1")] = build_wheel(BUGGY, padding=1024)
    code, report, _, _ = check(index, tmp_path)
    static = {r["version"]: flag(r)["static"] for r in report["releases"]}
    assert static["2.14.0"]["verdict"] == "changed" and static["2.14.0"]["evidence"][0] == (
        "differs from 2.13.0 (confirmed present): torch/jit/_recursive.py:ignored_attributes"
    )
    assert static["2.14.1"]["verdict"] == "present"
    assert static["2.14.1"]["evidence"][0].startswith("unchanged from 2.13.0 (confirmed present): ")
    assert code == 3 and f"{A_BUG}: 2.14.0: present -> changed" in change_lines(report)


def test_a_static_changed_that_confirmation_turns_into_present_is_no_status_change(tmp_path):
    """The fingerprint's pre-signal ("changed": needs confirmation), then the dynamic run saying the bug
    is still there: nothing for the downstream tests to flip."""
    before = {"bugs": {}, "releases": {"2.15.0": {"bugs": {A_BUG: {"static": {"verdict": "changed"}}}}}}
    after = {
        "bugs": {},
        "releases": {
            "2.15.0": {"bugs": {A_BUG: {"static": {"verdict": "changed"}, "dynamic": {"verdict": "present"}}}}
        },
    }
    measured = {"2.15.0": after["releases"]["2.15.0"]}
    assert changes(before, after, measured) == []
    after["releases"]["2.15.0"]["bugs"][A_BUG]["dynamic"]["verdict"] = "fixed"
    assert changes(before, after, measured) == [Change(A_BUG, "status", "2.15.0", "changed", "fixed")]


def test_a_recheck_shows_the_confirmed_verdict_that_decides_the_status():
    """Re-probing a release statically must not hide what the ledger confirmed for it: that verdict is
    the release's status."""
    confirmed = {"verdict": "present", "detail": "4 of 4 scenario runs in its scope show it"}
    ledger = {
        "bugs": {},
        "releases": {"2.15.0": {"bugs": {A_BUG: {"static": {"verdict": "changed"}, "dynamic": confirmed}}}},
    }
    rechecked = Outcome(
        {
            "2.15.0": {
                "probe": {},
                "bugs": {
                    A_BUG: {
                        "static": {"verdict": "changed", "evidence": ["differs from 2.14.1 (confirmed present): ..."]}
                    }
                },
            }
        }
    )
    lines = summary.text(rechecked, ledger, []).splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("2.15.0"))
    assert lines[at].split()[1:4] == [A_BUG, "changed", "present"]
    assert lines[at + 1] == f"    evidence: {confirmed['detail']}"  # under its row, within 100 columns
