"""Turn the oracle's verdicts into an outcome, compare it with the ledger, and conclude.

Pure functions over dataclasses: the formats render a ``Report``; nothing here prints.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from repro.environment import Environment
from repro.ledger import Expectation
from repro.engine.oracle import OracleRun, ScenarioResult

SCHEMA = 1


@dataclass(frozen=True)
class Report:
    environment: Environment
    run: OracleRun
    expected: Expectation
    outcome: str  # "present" | "fixed" | "different" | "cannot-test"
    drift: list[str]  # how reality departs from the ledger; empty when it agrees

    @property
    def bug_present(self) -> bool | None:
        return {"present": True, "fixed": False, "different": False}.get(self.outcome)

    @property
    def matches_expectation(self) -> bool:
        return not self.drift


def outcome_of(run: OracleRun) -> str:
    if run.cannot_test:
        return "cannot-test"
    bug = [r for r in run.results if r.scenario.bug and r.verdict != "unavailable"]
    if not bug:
        return "cannot-test"
    if any(r.verdict in ("raises", "differs") for r in bug):
        return "present"
    if all(r.verdict in ("match", "unavailable") for r in run.results):
        return "fixed"
    return "different"


def expected_verdict(result: ScenarioResult, expected: Expectation) -> str:
    """While the bug is present its scenarios raise; every other scenario matches eager."""
    return "raises" if result.scenario.bug and expected.outcome == "present" else "match"


def drift_of(run: OracleRun, outcome: str, expected: Expectation) -> list[str]:
    drift = []
    if outcome != expected.outcome:
        drift.append(f"outcome: expected {expected.outcome} ({expected.reason}), observed {outcome}")
    if run.cannot_test:  # nothing ran; only the outcome can disagree
        if drift:
            drift.append(f"cannot test: {run.cannot_test}")
        return drift
    for r in run.results:
        want = expected_verdict(r, expected)
        if r.verdict not in (want, "unavailable"):
            drift.append(f"{r.scenario.key} [{r.style}]: expected {want}, got {r.verdict}: {r.detail}")
    return drift


def build_report(environment: Environment, run: OracleRun, expected: Expectation) -> Report:
    outcome = outcome_of(run)
    return Report(environment, run, expected, outcome, drift_of(run, outcome, expected))


def conclusion(report: Report) -> str:
    """One line a maintainer can paste: what is broken, what works, and versus the ledger."""
    return f"{headline(report)} {versus_ledger(report)}"


def headline(report: Report) -> str:
    """What this run observed, in one sentence, without the ledger."""
    run = report.run
    if report.outcome == "cannot-test":
        why = run.cannot_test or "this torch lacks both affected hook APIs"
        head = f"Cannot test the bug on torch {report.environment.torch_version}: {why}."
    else:
        failing = sorted({r.scenario.api for r in run.results if r.verdict not in ("match", "unavailable")})
        counts = Counter(r.verdict for r in run.results)
        tally = ", ".join(f"{n} {verdict}" for verdict, n in sorted(counts.items()))
        head = {
            "present": "The bug is present",
            "fixed": "The bug is fixed: every scenario matches eager",
            "different": "The bug's APIs behave like eager, but other hook APIs do not",
        }[report.outcome]
        if failing:
            head += f" ({', '.join(failing)} depart from eager)"
        head += f"; {tally} across {len(run.results)} scenario runs."
    return head


def versus_ledger(report: Report) -> str:
    """The sentence that says whether the run agrees with the ledger, and what the ledger expects."""
    expected = f"{report.expected.outcome}: {report.expected.reason}"
    if report.matches_expectation:
        return f"This is as the ledger expects ({expected})."
    return f"The ledger expects otherwise ({expected}): this is drift."
