"""The expected-failure tests flip with reality: proven both ways on a torch patched in memory.

Each case runs the bug's scenario tests in a subprocess, against a ledger that says the
bug is present or fixed, on torch as installed or with a candidate fix applied in
memory (never in site-packages). Exit 0 means pytest agreed with the ledger. The
remaining case, the bug present and the ledger agreeing, is the main suite itself:
its run shows those tests as xfailed. A ledger claiming a fix on silenced torch needs no case
of its own: "silenced" shows the tests raise the bug's DiffersFromEager there, and without
the xfail mark that is a failure, as "ledger-claims-fix" shows for KnownBug.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from fix_shapes import BROKEN, TRUE
from index_server import build_pure_wheel
from tracker_helpers import change_lines, check, packaging_wheel

from helpers import A_BUG, ROOT, flag, patched_torch_env, run, run_json, write_fixed_ledger, write_ledger
from repro.catalogue import BUGS
from repro.ledger import DEFAULT_PATH, release_key
from repro.source_checks import installed_sources

pytestmark = [
    pytest.mark.needs_bug(A_BUG),
    pytest.mark.slow,
]  # every case applies fixes to a torch that has the bug, in subprocesses

SELECT = [
    "-m",
    "pytest",
    "-q",
    "-n",
    "0",
    "-p",
    "no:cacheprovider",  # one process: the patch lives in it
    str(ROOT / "tests" / "engine" / "test_scenarios.py"),
    "-k",
    "register_full_backward_hook and called and cpu",
]


@pytest.mark.parametrize(
    ("candidate", "ledger_says_fixed", "pytest_exit", "summary"),
    [
        (None, True, 1, "4 failed"),  # ledger claims a fix the torch lacks: red
        ("upstream-patch", True, 0, "4 passed"),  # fixed, ledger updated: green
        ("upstream-patch", False, 1, "4 failed"),  # fixed, ledger stale: strict XPASS is red
        ("ignored-attributes", False, 0, "4 xfailed"),  # error silenced, hooks still dead: still the bug
    ],
    ids=["ledger-claims-fix", "fixed", "ledger-stale", "silenced"],
)
def test_bug_tests_follow_ledger_and_torch(tmp_path, candidate, ledger_says_fixed, pytest_exit, summary):
    ledger = write_ledger(
        tmp_path / "ledger.json", fixed_in=release_key(torch.__version__) if ledger_says_fixed else None
    )
    prefix = ["-m", "repro.run_patched", f"{A_BUG}:{candidate}"] if candidate else []
    proc = run([*prefix, *SELECT], ledger=ledger)
    assert proc.returncode == pytest_exit, proc.stdout + proc.stderr
    assert summary in proc.stdout


# The tests whose assertions depend on the bugs' state on the installed torch. Left out for time: the
# CLI's broken-NPU runs (the same assertions in another environment) and test_filing.py, whose tests
# that depend on the bug carry the needs_bug marker.
BUG_AWARE = ["test_cli.py", "engine/test_scenarios.py", "test_report.py"]
CLI_TESTS = (
    "json_report or text_report or opposite or minimal_script_exits or one_bug_at_a_time or silenced "
    "or test_scenarios or test_report"
)


# --- a broken fix never reads "fixed"; any true fix flips the suites (fix shapes: tests/fix_shapes.py) ---

BROKEN_STATUS = {
    "prepend-ignored": "incomplete-fix",
    "returned-grads-ignored": "incomplete-fix",
    "ignored-attributes": "present",
}  # the one-liner: no error, and the hook never runs


def _overlay(tmp_path, shape) -> dict[str, str]:
    return patched_torch_env(tmp_path / "overlay", shape(installed_sources()))


@pytest.mark.parametrize("tier", [[], ["--slow"]], ids=["default-run", "slow-run"])
@pytest.mark.parametrize("name", list(BROKEN))
def test_a_broken_fix_never_reads_fixed(tmp_path, name, tier):
    """The default run, whose tier leaves out the scenarios these fixes break, completes the bug's scope
    before it concludes against the ledger's ``present`` (and says so); ``--slow`` runs it all anyway."""
    code, report = run_json(["-m", "repro", *tier], env=_overlay(tmp_path, BROKEN[name]))
    status = next(b for b in report["bugs"] if b["id"] == A_BUG)
    assert (status["status"], code) == (BROKEN_STATUS[name], 1 if status["status"] != "present" else 0), status
    if status["status"] == "incomplete-fix":
        assert report["outcome"] == "different" and "look before flipping" in status["detail"]
        assert A_BUG in report["completed"] if not tier else report["completed"] == {}


def _fix_wheel(version: str, overlay: Path) -> tuple[str, bytes]:
    """An installable "torch" release that is this machine's torch with ``overlay`` patched in: its
    ``.pth`` puts the installed torch on the path and serves the overlay's files before torch is imported."""
    site = Path(torch.__file__).resolve().parents[1]
    line = (
        f"import sys; sys.path.insert(0, {str(site)!r}); from pathlib import Path; "
        f"from repro.filing.source_import import import_from; import_from(Path({str(overlay)!r}))\n"
    )
    return build_pure_wheel("torch", version, {"torch_fix_overlay.pth": line.encode()})


@pytest.mark.parametrize(
    "pairs",
    [
        [
            ("9.9.1", "prepend-ignored"),
            ("9.9.2", "returned-grads-ignored"),
            ("9.9.3", "ignored-attributes"),
            ("9.9.4", "upstream-patch"),
        ]
    ],
    ids=["releases"],
)
def test_install_confirms_no_broken_fix_and_a_true_one(index, tmp_path, pairs):
    """Releases built with each fix, installed and run by ``check_upstream --versions``: only the true fix
    sets ``fixed_in``; an incomplete one is a status change that says it needs a look."""
    shapes = {**BROKEN, **TRUE}
    for version, name in pairs:
        tree = tmp_path / name
        for path, text in shapes[name]({p: t for p, t in installed_sources().items() if t is not None}).items():
            (tree / path).parent.mkdir(parents=True, exist_ok=True)
            (tree / path).write_text(text, encoding="utf-8")
        index.wheels.update([_fix_wheel(version, tree)])
    index.wheels.update([packaging_wheel()])
    (tmp_path / "ledger.json").write_text(
        json.dumps(
            {
                "schema": 2,
                "bugs": {},
                "releases": {
                    "2.13.0": {
                        "bugs": {
                            A_BUG: {
                                "dynamic": {
                                    "verdict": "present",
                                    "detail": "confirmed",
                                    "checked_at": "2026-12-01T00:00:00",
                                }
                            }
                        }
                    }
                },
            }
        )
    )
    code, result, ledger, stderr = check(
        index,
        tmp_path,
        "--versions",
        ",".join(v for v, _ in pairs),
        "--install-index-url",
        f"{index.url}/simple/",
        "--bug",
        A_BUG,
    )
    got = {v: flag(ledger["releases"][v])["dynamic"]["verdict"] for v, _ in pairs}
    assert got == {"9.9.1": "incomplete-fix", "9.9.2": "incomplete-fix", "9.9.3": "present", "9.9.4": "fixed"}, stderr
    assert code == 3 and ledger["bugs"][A_BUG]["fixed_in"] == "9.9.4" and not result["errors"]
    assert f"{A_BUG}: 9.9.1: present -> incomplete-fix (needs a look" in "\n".join(change_lines(result))


@pytest.mark.parametrize("name", list(TRUE))
def test_bug_aware_tests_are_green_on_any_true_fix_with_a_ledger_saying_fixed(tmp_path, name):
    """No test asserts how the fix is made: under each true fix the tests tied to the bug pass. Under the
    first, the whole quick suite does."""
    env = _overlay(tmp_path, TRUE[name])
    ledger = write_fixed_ledger(tmp_path / "ledger.json", torch.__version__)
    chosen = [] if name == "setattr-on-wrapper" else ["-k", CLI_TESTS, *(str(ROOT / "tests" / f) for f in BUG_AWARE)]
    proc = run(
        [
            "-m",
            "pytest",
            "-q",
            "-rfsx",
            "-p",
            "no:cacheprovider",
            "-m",
            "not network and not other_torch and not slow",
            *chosen,
        ],
        ledger=ledger,
        env=env,
        timeout=600,
    )
    failed = [line for line in proc.stdout.splitlines() if line.startswith("FAILED")]  # the tail is the xfails
    assert proc.returncode == 0, "\n".join(failed) + proc.stdout[-2000:] + proc.stderr[-1000:]
    assert f"only meaningful while {A_BUG} is present" in proc.stdout


def test_bug_aware_tests_are_red_on_a_true_fix_with_a_ledger_saying_present(tmp_path):
    proc = run(
        [
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-m",
            "not network and not other_torch",
            "-k",
            CLI_TESTS,
            *(str(ROOT / "tests" / f) for f in BUG_AWARE),
        ],
        env=_overlay(tmp_path, TRUE["object-setattr"]),
        timeout=600,
    )
    assert proc.returncode == 1 and " failed" in proc.stdout.splitlines()[-1], proc.stdout[-2000:]


# --- each bug's upstream patch, in force in the test process: the tests tied to the bug flip under a fix,
# and still fail, with the patch's own error, under a loud one (whose bug never reads "fixed")

WITH_PATCH = {bug_id: bug.fixes.patch for bug_id, bug in BUGS.items()}
TIED = """import runpy

import pytest


@pytest.mark.upstream_bug({bug_id!r})
def test_the_paste_ready_script_runs_as_users_want():
    runpy.run_path({script!r}, run_name="__main__")
"""


def _ledger_saying(path: Path, bug_id: str, verdict: str) -> Path:
    """The packaged ledger, with this release's confirmed result for ``bug_id`` set to ``verdict``."""
    ledger = json.loads(DEFAULT_PATH.read_text())
    entry = ledger["releases"].setdefault(release_key(torch.__version__), {"bugs": {}})
    entry["bugs"].setdefault(bug_id, {})["dynamic"] = {
        "verdict": verdict,
        "detail": "set by the test",
        "checked_at": "2026-12-04T00:00:00",
    }
    path.write_text(json.dumps(ledger))
    return path


def _tied_test(tmp_path: Path, bug_id: str) -> Path:
    """A downstream test tied to ``bug_id`` (the plugin's marker) that runs the bug's paste-ready script."""
    script = tmp_path / "bug.py"
    script.write_text(BUGS[bug_id].paste)
    test = tmp_path / f"test_tied_{bug_id.replace('-', '_')}.py"
    test.write_text(TIED.format(bug_id=bug_id, script=str(script)))
    return test


@pytest.mark.parametrize("bug_id", list(WITH_PATCH))
def test_tests_tied_to_a_bug_follow_its_upstream_patch(tmp_path, bug_id):
    patch, test = WITH_PATCH[bug_id], _tied_test(tmp_path, bug_id)
    pytest_run = ["-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "-m", "", str(test)]
    unpatched = run(pytest_run, ledger=_ledger_saying(tmp_path / "present.json", bug_id, "present"))
    assert unpatched.returncode == 0 and "1 xfailed" in unpatched.stdout, unpatched.stdout[-2000:]
    patched = ["-m", "repro.run_patched", f"{bug_id}:upstream-patch", *pytest_run]
    if not patch.refusal:  # a fix: green once the ledger says so, red (strict) while it says present
        fixed = run(patched, ledger=_ledger_saying(tmp_path / "fixed.json", bug_id, "fixed"))
        stale = run(patched, ledger=_ledger_saying(tmp_path / "stale.json", bug_id, "present"))
        assert fixed.returncode == 0 and "1 passed" in fixed.stdout, fixed.stdout[-2000:]
        assert stale.returncode == 1 and "1 failed" in stale.stdout, stale.stdout[-2000:]
        return
    loud = run(patched, ledger=_ledger_saying(tmp_path / "present.json", bug_id, "present"))
    assert loud.returncode == 1 and "1 failed" in loud.stdout and patch.refusal in loud.stdout, loud.stdout[-2000:]
    code, report = run_json(["-m", "repro.run_patched", f"{bug_id}:upstream-patch", "-m", "repro", "--bug", bug_id])
    status = next(b for b in report["bugs"] if b["id"] == bug_id)
    assert (code, status["status"]) == (1, "incomplete-fix"), status  # what the patch changed, never "fixed"
    assert patch.refusal in status["detail"], status["detail"]
