"""Statuses per bug, the outcome, drift against the ledger and the conclusion: pure functions, one concern each."""

from __future__ import annotations

import pytest

from repro.catalogue import BUGS
from repro.engine.oracle import OracleRun
from repro.environment import Environment
from repro.ledger import Expectation
from repro.report import build_report, conclusion
from test_catalogue import DEPARTURES, _result

ENV = Environment("2.13.0", "3.11", "cpu", "not installed")
FLAG_KEY = "register_full_backward_hook: called with grad_input and grad_output"
FLAG_MATCH = _result(FLAG_KEY, "plain_forward", "match")
FLAG_RAISES = DEPARTURES["full-backward-hook-flag"]
WORKING = _result("register_forward_hook: prepend=True runs before earlier hooks", "plain_forward", "match")
ODD = _result("register_forward_hook: prepend=True runs before earlier hooks", "plain_forward", "differs", "x.grad")


def _expect(outcome: str = "present", **per_bug: str) -> dict[str, Expectation]:
    return {bug_id: Expectation(per_bug.get(bug_id.replace("-", "_"), outcome), "test") for bug_id in BUGS}


def _report(results, expected=None, cannot_test=None, skipped=None):
    return build_report(ENV, OracleRun(results, [], cannot_test), expected or _expect(), skipped)


def _status(report, bug_id):
    return next(b.status for b in report.bugs if b.bug.id == bug_id)


def test_a_bug_is_judged_only_by_the_runs_in_its_scope():
    report = _report([FLAG_RAISES, WORKING])
    assert _status(report, "full-backward-hook-flag") == "present"
    assert _status(report, "global-backward-hooks-scripted") == "not-applicable"  # nothing in its scope ran


def test_a_bug_whose_runs_match_is_fixed_and_that_is_drift_while_expected_present():
    report = _report([FLAG_MATCH, WORKING])
    assert _status(report, "full-backward-hook-flag") == "fixed" and report.outcome == "fixed"
    assert report.drift[0] == "full-backward-hook-flag: expected present (test), observed fixed"
    assert any("expected full-backward-hook-flag to show, got match" in d for d in report.drift)


def test_a_departure_no_bug_explains_is_different_and_drift():
    report = _report([FLAG_RAISES, ODD])
    assert report.outcome == "different" and report.unexplained() == [ODD]
    assert any("a departure no catalogued bug explains" in d for d in report.drift)


def test_skipped_and_not_applicable_bugs_never_drift():
    report = _report([FLAG_RAISES], skipped={"module-compile-noop": "not asked for"})
    assert _status(report, "module-compile-noop") == "skipped" and report.matches_expectation
    assert report.outcome == "present" and report.bug_present is True


def test_torchscript_unusable_is_cannot_test_for_every_bug():
    report = _report([], cannot_test="TorchScript is disabled")
    assert report.outcome == "cannot-test" and {b.status for b in report.bugs} == {"cannot-test"}


@pytest.mark.parametrize(
    ("results", "expected", "sentence"),
    [
        ([FLAG_RAISES], _expect(), "1 of the 1 catalogued bugs checked present (full-backward-hook-flag); "
         "1 raises across 1 scenario runs. This is as the ledger expects."),
        ([FLAG_MATCH], _expect(), "None of the 1 catalogued bugs checked is present; 1 match across 1 scenario "
         "runs. The ledger expects otherwise for 2 item(s): this is drift."),
        ([], _expect(), "Cannot test on torch 2.13.0: TorchScript is disabled. "
         "The ledger expects otherwise for 4 item(s): this is drift."),
    ],
    ids=["agrees", "drift", "cannot-test"],
)
def test_conclusion_is_a_sentence_in_each_branch(results, expected, sentence):
    report = _report(results, expected, cannot_test=None if results else "TorchScript is disabled")
    assert conclusion(report) == sentence
