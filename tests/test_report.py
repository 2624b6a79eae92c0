"""Statuses per bug, the outcome, drift against the ledger and the conclusion: pure functions, one concern each."""

from __future__ import annotations

import pytest
from results import DEPARTURES, ENV, LOUD_BUGS, expectations, refusal, report_of, result, unclaimed

from repro.catalogue import BUGS
from repro.engine.oracle import OracleRun
from repro.engine.scenarios import SCENARIOS
from repro.formats.text import completed_line, render
from repro.report import LOUD, conclude, conclusion

FLAG_KEY = "register_full_backward_hook: called with grad_input and grad_output"
FLAG_MATCH = result(FLAG_KEY, "plain_forward", "match")
FLAG_RAISES = DEPARTURES["full-backward-hook-flag"]
WORKING = result("register_forward_hook: prepend=True runs before earlier hooks", "plain_forward", "match")
ODD = result("register_forward_hook: prepend=True runs before earlier hooks", "plain_forward", "differs", "x.grad")


def _status(report, bug_id):
    return next(b.status for b in report.bugs if b.bug.id == bug_id)


def test_a_bug_is_judged_only_by_the_runs_in_its_scope():
    report = report_of([FLAG_RAISES, WORKING])
    assert _status(report, "full-backward-hook-flag") == "present"
    assert _status(report, "global-backward-hooks-scripted") == "not-applicable"  # nothing in its scope ran


def test_a_bug_whose_runs_match_is_fixed_and_that_is_drift_while_expected_present():
    report = report_of([FLAG_MATCH, WORKING])
    assert _status(report, "full-backward-hook-flag") == "fixed" and report.outcome == "fixed"
    assert report.drift[0] == "full-backward-hook-flag: expected present (test), observed fixed"
    assert any("expected full-backward-hook-flag to show, got match" in d for d in report.drift), report.drift


def test_a_departure_no_bug_explains_is_different_and_drift():
    report = report_of([FLAG_RAISES, ODD])
    assert report.outcome == "different" and report.unexplained() == [ODD]
    assert any("a departure no catalogued bug explains" in d for d in report.drift), report.drift


def test_skipped_and_not_applicable_bugs_never_drift():
    report = report_of([FLAG_RAISES], skipped={"module-compile-noop": "not asked for"})
    assert _status(report, "module-compile-noop") == "skipped" and report.matches_expectation
    assert report.outcome == "present" and report.bug_present is True


def test_torchscript_unusable_is_cannot_test_for_every_bug():
    report = report_of([], cannot_test="TorchScript is disabled")
    assert report.outcome == "cannot-test" and {b.status for b in report.bugs} == {"cannot-test"}


@pytest.mark.parametrize(
    ("results", "expected", "sentence"),
    [
        (
            [FLAG_RAISES],
            expectations(),
            "1 of the 1 catalogued bugs checked present (full-backward-hook-flag); "
            "1 raises across 1 scenario runs. This is as the ledger expects.",
        ),
        (
            [FLAG_MATCH],
            expectations(),
            "None of the 1 catalogued bugs checked is present; 1 match across 1 scenario "
            "runs. The ledger expects otherwise for 2 item(s): this is drift.",
        ),
        (
            [],
            expectations(),
            "Cannot test on torch 2.13.0: TorchScript is disabled. "
            "Nothing could be measured here, so nothing is compared with the ledger (an environment error).",
        ),
    ],
    ids=["agrees", "drift", "cannot-test"],
)
def test_conclusion_is_a_sentence_in_each_branch(results, expected, sentence):
    report = report_of(results, expected, cannot_test=None if results else "TorchScript is disabled")
    assert conclusion(report) == sentence


FLAG_PREPEND = "register_full_backward_hook: prepend=True runs before earlier hooks"
PREPEND_IGNORED = result(FLAG_PREPEND, "plain_forward", "differs", "hook calls")  # a broken fix's departure


def test_a_bug_whose_error_is_gone_while_its_scope_departs_is_an_incomplete_fix_never_fixed():
    report = report_of([FLAG_MATCH, PREPEND_IGNORED])
    status = next(b for b in report.bugs if b.bug.id == "full-backward-hook-flag")
    assert status.status == "incomplete-fix" and "look before flipping" in status.detail
    assert FLAG_PREPEND.split(":")[0] in status.detail and report.outcome == "different"
    assert report.drift[0].startswith("full-backward-hook-flag: expected present (test), observed incomplete-fix")
    assert (
        _status(
            report_of([FLAG_MATCH, PREPEND_IGNORED], expectations(full_backward_hook_flag="incomplete-fix")),
            "full-backward-hook-flag",
        )
        == "incomplete-fix"
    )


@pytest.mark.parametrize("bug_id", LOUD_BUGS)
def test_a_run_its_loud_patch_refuses_is_that_bugs_incomplete_fix_never_fixed_nor_unexplained(bug_id):
    """A torch that merged a loud upstream patch: the bug's departure is now the patch's clear error."""
    report = report_of([refusal(bug_id)])
    status = next(b for b in report.bugs if b.bug.id == bug_id)
    assert (status.status, status.detail.split(" (")[0]) == ("incomplete-fix", LOUD)
    assert report.unexplained() == [] and report.outcome != "different"
    assert f"refused by {bug_id}'s upstream patch" in " ".join(render(report).split())


@pytest.mark.parametrize("bug_id", LOUD_BUGS)
def test_a_loud_patch_arriving_is_drift_until_the_ledger_records_the_incomplete_fix(bug_id):
    arrived = report_of([refusal(bug_id)])  # the ledger still expects every bug present
    assert f"{bug_id}: expected present (test), observed incomplete-fix" in arrived.drift
    assert any(f"expected {bug_id} to show, got raises" in d for d in arrived.drift), arrived.drift
    recorded = report_of([refusal(bug_id)], expectations(**{bug_id.replace("-", "_"): "incomplete-fix"}))
    assert recorded.drift == []


@pytest.mark.parametrize("bug_id", LOUD_BUGS)
def test_a_loud_patchs_refusal_outside_its_bugs_scope_is_the_patchs_and_leaves_the_bugs_status(bug_id):
    """addition-refused-misleadingly's patch words every addition's refusal alike, in its scope or not."""
    stray = refusal(bug_id, in_scope=False)
    report = report_of([FLAG_RAISES, stray], expectations(**{bug_id.replace("-", "_"): "incomplete-fix"}))
    assert report.unexplained() == [] and report.outcome == "present"
    assert [d for d in report.drift if stray.scenario.key in d] == []  # the ledger knows the patch is in
    assert _status(report, bug_id) != "incomplete-fix"  # only runs in its scope judge the bug
    assert any(stray.scenario.key in d for d in report_of([FLAG_RAISES, stray]).drift)  # until it knows


@pytest.mark.parametrize("bug_id", LOUD_BUGS)
def test_a_loud_patch_that_lets_another_run_depart_silently_is_incomplete_and_unexplained(bug_id):
    """A broken loud patch: it refuses one run and leaves another departing silently, which is drift
    even where the ledger records the incomplete fix."""
    silent = unclaimed(bug_id, "raises", "ValueError: a departure no bug knows")
    report = report_of([refusal(bug_id), silent], expectations(**{bug_id.replace("-", "_"): "incomplete-fix"}))
    status = next(b for b in report.bugs if b.bug.id == bug_id)
    assert status.status == "incomplete-fix" and "look before flipping" in status.detail
    assert report.unexplained() == [silent] and report.outcome == "different" and report.drift


def test_a_bug_whose_eager_twin_fails_in_its_whole_scope_cannot_be_judged_never_an_incomplete_fix():
    """torch 2.0.0 on Python 3.11: torch.compile raises for the eager twin too; the bug is not-applicable."""
    key = "torch.compile: a counting backend captures the forward; outputs and hooks as eager"
    failing = result(key, "script_method", "error", "the eager twin raised RuntimeError: Python 3.11+ not supported")
    status = next(b for b in report_of([failing]).bugs if b.bug.id == "compile-subclass-silent")
    assert (status.status, status.detail) == (
        "not-applicable",
        "its scenarios cannot run here: the eager twin raised RuntimeError: Python 3.11+ not supported",
    )
    shown = report_of([failing, DEPARTURES["compile-subclass-silent"]])
    assert _status(shown, "compile-subclass-silent") == "present"  # the runs that could run still judge it


def test_a_departure_through_another_bug_counts_neither_way():
    other = DEPARTURES["global-hooks-root-only"]
    assert set(BUGS["full-backward-hook-flag"].apis).isdisjoint(other.scenario.apis)  # a run in one scope only
    assert _status(report_of([FLAG_MATCH, other]), "full-backward-hook-flag") == "fixed"
    assert _status(report_of([FLAG_MATCH, other]), "global-hooks-root-only") == "present"


def test_the_default_run_completes_a_bugs_scope_before_concluding_against_the_ledger():
    """From the default part alone the bug reads fixed, which the ledger does not expect: its left-out
    scenarios are run, and only then is the status concluded (here: an incomplete fix), and said."""
    prepend = PREPEND_IGNORED.scenario
    unrelated = next(
        s
        for s in SCENARIOS
        if s.tier != "default" and not s.apis & {"register_full_backward_hook", "register_backward_hook"}
    )
    asked: list[list] = []

    def run_more(scenarios):
        asked.append(scenarios)
        return OracleRun([PREPEND_IGNORED], ["a warning"], None)

    report = conclude(ENV, OracleRun([FLAG_MATCH], [], None), expectations(), {}, (prepend, unrelated), run_more)
    assert asked == [[prepend]] and report.completed == (("full-backward-hook-flag", 1),)
    assert _status(report, "full-backward-hook-flag") == "incomplete-fix" and report.not_run == (unrelated,)
    assert "full-backward-hook-flag: 1 more" in completed_line(report) and report.run.warnings == ["a warning"]
    agreeing = conclude(ENV, OracleRun([FLAG_RAISES], [], None), expectations(), {}, (prepend,), run_more)
    assert len(asked) == 1 and agreeing.completed == () and agreeing.not_run == (prepend,)  # nothing to settle


def test_a_bug_whose_apis_this_torch_lacks_is_not_applicable_without_running(monkeypatch):
    """Known from the installed torch alone, so even a run that skipped the bug's scenarios says so."""
    import torch

    monkeypatch.delattr(torch.nn.Module, "compile")
    report = report_of([FLAG_RAISES], skipped={"module-compile-noop": "its scenarios are slow"})
    status = next(b for b in report.bugs if b.bug.id == "module-compile-noop")
    assert status.status == "not-applicable" and status.detail.endswith("this torch lacks compile")
