"""Downstream tests that flip from the ledger: ``repro.expect.known_upstream_bug`` and the pytest plugin.

The decision table runs in process (a faked detector, ledgers written per case) under unittest and
as a plain pytest function; the rest runs in subprocesses, as a downstream project would: the example
suite on torch as installed, patched with the true fix and patched with the one-liner that silences the
error; the marker and the decorator under pytest (xdist too), ``python -m unittest`` and torch's
``run_tests()``; and the plugin in a session that uses none of it.
"""

from __future__ import annotations

import io
import textwrap
import tomllib
import unittest
from pathlib import Path

import pytest
import torch

from helpers import ROOT, run, write_fixed_ledger, write_ledger
from repro import expect
from repro.catalogue import UnknownBug
from repro.catalogue.full_backward_hook_flag import SIGNATURE
from repro.ledger import ORIGINAL, release_key

EXAMPLE = ROOT / "examples" / "downstream" / "test_script_module_hooks.py"
ONE_PROCESS = ["-m", "pytest", "-n", "0", "-p", "no:cacheprovider", "-rxs"]  # a patch applied in memory lives in it
BUG_ERROR = f"{SIGNATURE} to type NoneType: Cannot cast True to None"


def _raise(err: BaseException) -> None:
    raise err


def _chained() -> None:
    try:
        raise RuntimeError(BUG_ERROR)
    except RuntimeError as err:
        raise ValueError("the model could not be prepared") from err


BODIES = {
    "bug error": lambda: _raise(RuntimeError(BUG_ERROR)),
    "bug error, chained": _chained,
    "assertion": lambda: _raise(AssertionError("the hook ran 0 times")),
    "other error": lambda: _raise(ValueError("unrelated")),
    "pass": lambda: None,
}


def _ledger(path: Path, outcome: str) -> Path:
    """A ledger whose confirmed result for the installed release is ``outcome`` for the original bug."""
    if outcome == "fixed":
        return write_fixed_ledger(path, torch.__version__)
    return write_ledger(path, releases={release_key(torch.__version__): {"dynamic": {"verdict": outcome}}})


# (ledger says, detector says, test body) -> what the run must report
DECISIONS = [
    ("present", "present", "bug error", "expected failure"),
    ("present", "present", "bug error, chained", "expected failure"),
    ("present", "present", "assertion", "expected failure"),
    ("present", "fixed", "assertion", "failure"),  # an assertion the detector does not confirm: not the bug
    ("present", "fixed", "bug error", "expected failure"),  # its own error text needs no detector
    ("present", "present", "other error", "error"),
    ("present", "present", "pass", "failure"),  # strict: the ledger is stale
    ("fixed", "fixed", "pass", "success"),
    ("fixed", "fixed", "bug error", "error"),
    ("fixed", "present", "assertion", "failure"),
    ("present", "not-applicable", "bug error", "skipped"),
    ("cannot-test", "present", "bug error", "skipped"),
]


@pytest.fixture
def decorated(tmp_path, monkeypatch, request):
    """A test body decorated against a ledger and a detector saying what the case says."""
    ledger_says, detector_says, body = request.param
    monkeypatch.setattr(expect, "detector_status", lambda bug_id: (detector_says, "faked for this case"))
    return expect.known_upstream_bug(ORIGINAL, ledger=_ledger(tmp_path / "ledger.json", ledger_says)), BODIES[body]


def _unittest_outcome(result: unittest.TestResult) -> str:
    kinds = {"expected failure": result.expectedFailures, "failure": result.failures, "error": result.errors,
             "skipped": result.skipped, "unexpected success": result.unexpectedSuccesses}
    found = [kind for kind, entries in kinds.items() if entries]
    return found[0] if len(found) == 1 else "success" if result.wasSuccessful() and not found else str(found)


@pytest.mark.parametrize(("decorated", "want"), [(case[:3], case[3]) for case in DECISIONS],
                         ids=["-".join(case[:3]).replace(" ", "_") for case in DECISIONS], indirect=["decorated"])
def test_decision_under_unittest(decorated, want):
    decorate, body = decorated

    class Case(unittest.TestCase):
        @decorate
        def test_behaviour(self):
            body()

    result = unittest.TextTestRunner(stream=io.StringIO()).run(Case("test_behaviour"))
    assert _unittest_outcome(result) == want


PYTEST_OUTCOMES = {"expected failure": pytest.xfail.Exception, "skipped": pytest.skip.Exception,
                   "failure": AssertionError, "error": (RuntimeError, ValueError)}


@pytest.mark.parametrize(("decorated", "want"), [(case[:3], case[3]) for case in DECISIONS],
                         ids=["-".join(case[:3]).replace(" ", "_") for case in DECISIONS], indirect=["decorated"])
def test_decision_as_a_pytest_function(decorated, want):
    decorate, body = decorated
    test = decorate(lambda: body())
    if want == "success":
        test()
        return
    with pytest.raises(PYTEST_OUTCOMES[want]) as raised:
        test()
    if want == "failure":
        assert isinstance(raised.value, expect.UnexpectedPass) == (body is BODIES["pass"])


def test_unknown_bug_fails_at_decoration():
    with pytest.raises(UnknownBug, match="no catalogued bug 'no-such-bug'; known: full-backward-hook-flag"):
        expect.known_upstream_bug("no-such-bug")


def test_detector_confirms_the_bug_as_the_ledger_does():
    """The real detector, once per process, agrees with the shipped ledger on the installed torch."""
    assert expect.detector_status(ORIGINAL)[0] == ("fixed" if expect.from_ledger(ORIGINAL, expect.ledger_path())
                                                   .state == expect.MUST_PASS else "present")


# --- the example downstream suite: green where the ledger and torch agree, red where they do not ------------

@pytest.mark.needs_bug  # the shipped ledger and the installed torch both say present
def test_example_is_green_on_installed_torch_with_header_and_summary_under_xdist():
    proc = run(["-m", "pytest", "-n", "2", "-p", "no:cacheprovider", str(EXAMPLE)])
    out = proc.stdout
    assert proc.returncode == 0 and "18 passed, 1 xfailed" in out, out + proc.stderr
    assert f"upstream bugs on torch {torch.__version__}, from the ledger {ROOT / 'repro' / 'ledger.json'}:" in out
    assert f"  {ORIGINAL}: expected failure; the ledger says {ORIGINAL} is present on torch" in out
    assert "  module-compile-noop: expected failure;" in out
    assert ("test_script_module_hooks.py::TestScriptModuleHooks::test_full_backward_hook_called_with_gradients: "
            f"{ORIGINAL}, expected failure: xfailed") in out


@pytest.mark.needs_bug
@pytest.mark.parametrize(
    ("candidate", "ledger_says_fixed", "exit_code", "summary", "why"),
    [
        ("upstream-patch", True, 0, "19 passed", ""),
        ("upstream-patch", False, 1, "1 failed, 18 passed",
         "UnexpectedPass: TestScriptModuleHooks.test_full_backward_hook_called_with_gradients passed, but the ledger"),
        ("ignored-attributes", True, 1, "1 failed, 18 passed", "the full backward hook ran 0 times"),
    ],
    ids=["fixed-ledger-fixed", "fixed-ledger-stale", "silenced-ledger-claims-fix"],
)
def test_example_follows_ledger_on_patched_torch(tmp_path, candidate, ledger_says_fixed, exit_code, summary, why):
    ledger = write_fixed_ledger(tmp_path / "ledger.json", torch.__version__) if ledger_says_fixed else None
    proc = run(["-m", "repro.run_patched", candidate, *ONE_PROCESS, str(EXAMPLE)], ledger=ledger)
    assert proc.returncode == exit_code and summary in proc.stdout, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert why in proc.stdout
    assert f"{ORIGINAL}, {'must pass' if ledger_says_fixed else 'expected failure'}: " in proc.stdout


def test_example_is_not_part_of_this_projects_suite():
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert options["testpaths"] == ["tests"] and not EXAMPLE.is_relative_to(ROOT / "tests")
