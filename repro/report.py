"""Turn the oracle's verdicts into a status per catalogued bug and an outcome, compare them with
the ledger, and conclude.

Pure functions over dataclasses: the formats render a ``Report``; nothing here prints. A bug is
judged only by the scenario runs in its scope (its APIs, its subclass styles): ``present`` when
one of them departs from eager in the way its recogniser knows; ``fixed`` only when every one
matches eager or is refused by design (a run that departs through another catalogued bug is that
bug's and counts neither way); ``incomplete-fix`` when its own symptom is gone but a run in its scope
departs in a way no catalogued bug explains (a broken fix must never read ``fixed``), or raises its
own loud upstream patch's refusal (a torch that merged that patch: clearer, still not eager);
``not-applicable`` when this torch lacks every API it needs, ``skipped`` when its scenarios were
not run (the default run leaves some out for speed), ``cannot-test`` when TorchScript itself is unusable.
A departure that no catalogued bug explains makes the outcome ``different``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from repro.catalogue import BUGS, cause_of, covering, refused_by_patch
from repro.catalogue.bug import Bug
from repro.engine.oracle import OracleRun, ScenarioResult
from repro.engine.scenarios import Scenario
from repro.environment import Environment
from repro.ledger import Expectation
from repro.vocabulary import DEPARTURES, NOT_JUDGED, Outcome, Status, Verdict

SCHEMA = 6


def scenario_summary(result: ScenarioResult) -> dict[str, Any]:
    """A scenario run without what each twin recorded: what judging a candidate fix reads."""
    return {
        "api": result.scenario.api,
        "name": result.scenario.name,
        "model": result.scenario.model,
        "style": result.style,
        "instance": result.instance,
        "covered_by": covering(result),
        "cause": explained_by(result),
        "verdict": result.verdict,
        "detail": result.detail,
        # a refusal raised, or a designed difference
        "scripted_raised": bool(result.scripted and result.scripted.error),
    }


@dataclass(frozen=True)
class BugStatus:
    bug: Bug
    status: Status
    detail: str
    expected: Expectation

    @property
    def matches_expectation(self) -> bool:
        """``not-applicable`` and ``skipped`` never disagree: there is nothing to compare."""
        return self.status in (Status.NOT_APPLICABLE, Status.SKIPPED) or self.status == self.expected.outcome


@dataclass(frozen=True)
class Report:
    environment: Environment
    run: OracleRun
    bugs: list[BugStatus]
    outcome: Outcome
    drift: list[str]  # how reality departs from the ledger; empty when it agrees
    not_run: tuple[Scenario, ...] = ()  # what the default run left out for speed (--slow runs it)
    completed: tuple[tuple[str, int], ...] = ()  # (bug id, scenarios run beyond the tier to conclude on it)

    @property
    def bug_present(self) -> bool | None:
        return {
            Outcome.PRESENT: True,
            Outcome.FIXED: False,
            Outcome.DIFFERENT: any(b.status == Status.PRESENT for b in self.bugs),
        }.get(self.outcome)

    @property
    def matches_expectation(self) -> bool:
        return not self.drift

    def unexplained(self) -> list[ScenarioResult]:
        return unexplained(self.run)


def unexplained(run: OracleRun) -> list[ScenarioResult]:
    """Departures no catalogued bug explains: each is drift, and makes the outcome ``different``."""
    return [r for r in run.results if r.verdict in DEPARTURES and explained_by(r) is None]


def explained_by(result: ScenarioResult) -> str | None:
    """The bug that answers for a departure: the one whose symptom it shows, or whose loud upstream
    patch refused it."""
    return cause_of(result) or refused_by_patch(result)


INCOMPLETE = "its error is gone, but its APIs still depart from nn.Module: look before flipping"
LOUD = "its upstream patch is in this torch: a clear error where it departed silently, still not eager"


def status_of(bug: Bug, run: OracleRun, skipped: str | None) -> tuple[Status, str]:
    """(status, why) for one bug from the scenario runs in its scope; ``skipped`` says why its
    scenarios did not run, if they did not."""
    if run.cannot_test:
        return Status.CANNOT_TEST, run.cannot_test
    missing = absent_apis(bug)
    if missing:
        return Status.NOT_APPLICABLE, f"its scenarios cannot run here: this torch lacks {', '.join(missing)}"
    if skipped:
        return Status.SKIPPED, skipped
    scope = [r for r in run.results if bug.covers(r)]
    judged = [r for r in scope if r.verdict not in (*NOT_JUDGED, Verdict.ERROR)]  # where eager fails, nothing is judged
    if not judged:
        reasons = sorted({r.detail for r in scope}) or ["no scenario covers it"]
        return Status.NOT_APPLICABLE, f"its scenarios cannot run here: {'; '.join(reasons)}"
    shown = [r for r in judged if cause_of(r) == bug.id]
    if shown:
        return Status.PRESENT, f"{len(shown)} of {len(judged)} scenario runs in its scope show it"
    departing = [r for r in judged if r.verdict not in (Verdict.MATCH, Verdict.REFUSED) and explained_by(r) is None]
    refused = [r for r in judged if cause_of(r) is None and refused_by_patch(r) == bug.id]
    for runs, why in ((departing, INCOMPLETE), (refused, LOUD)):
        if runs:
            first = runs[0]
            return Status.INCOMPLETE_FIX, (
                f"{why} ({len(runs)} of {len(judged)} scenario runs in its "
                f"scope, e.g. {first.scenario.key} [{first.style}]: {first.detail})"
            )
    return Status.FIXED, f"none of its {len(judged)} scenario runs shows it or departs from eager"


def absent_apis(bug: Bug) -> list[str]:
    """The APIs of ``bug`` this torch lacks, when it lacks all of them (then the bug cannot exist here,
    which is known without running anything); empty otherwise."""
    from repro.engine.scenarios import SCENARIOS
    from repro.engine.scenarios.table import missing_needs

    scope = [s for s in SCENARIOS if s.apis & set(bug.apis)]
    missing = [missing_needs(s) for s in scope]
    return sorted({need for needs in missing for need in needs}) if scope and all(missing) else []


def outcome_of(run: OracleRun, bugs: list[BugStatus], unexplained: list[ScenarioResult]) -> Outcome:
    if run.cannot_test or all(b.status in (Status.NOT_APPLICABLE, Status.SKIPPED) for b in bugs):
        return Outcome.CANNOT_TEST
    if unexplained:
        return Outcome.DIFFERENT
    return Outcome.PRESENT if any(b.status == Status.PRESENT for b in bugs) else Outcome.FIXED


def _expected_causes(result: ScenarioResult, expected: dict[str, Expectation]) -> list[str]:
    """The bugs the ledger expects to show in this run: those covering it and expected present."""
    return [bug.id for bug in BUGS.values() if bug.covers(result) and expected[bug.id].outcome == Outcome.PRESENT]


def drift_of(run: OracleRun, bugs: list[BugStatus], expected: dict[str, Expectation]) -> list[str]:
    drift = [
        f"{b.bug.id}: expected {b.expected.outcome} ({b.expected.reason}), observed {b.status}"
        for b in bugs
        if not b.matches_expectation
    ]
    judged = {b.bug.id for b in bugs if b.status not in (Status.SKIPPED, Status.CANNOT_TEST)}
    for r in run.results:
        if r.verdict in (*NOT_JUDGED, Verdict.REFUSED):  # a refusal by design is no bug's departure
            continue
        want, cause, refuser = _expected_causes(r, expected), cause_of(r), refused_by_patch(r)
        if (cause and cause not in judged) or (refuser and expected[refuser].outcome == Status.INCOMPLETE_FIX):
            continue  # a bug not judged here, or a loud patch the ledger knows is in this torch
        run_of = f"{r.scenario.key} [{r.style}, {r.instance} instance]"  # identical lines print once, counted
        if want and cause not in want:
            drift.append(f"{run_of}: expected {' or '.join(want)} to show, got {r.verdict}: {r.detail}")
        elif not want and r.verdict in DEPARTURES:
            why = (
                f"explained by {cause}"
                if cause
                else f"refused by {refuser}'s upstream patch"
                if refuser
                else "a departure no catalogued bug explains"
            )
            drift.append(f"{run_of}: expected match, got {r.verdict} ({why}): {r.detail}")
    return drift


def build_report(
    environment: Environment,
    run: OracleRun,
    expected: dict[str, Expectation],
    skipped: dict[str, str] | None = None,
    not_run: tuple[Scenario, ...] = (),
    completed: tuple[tuple[str, int], ...] = (),
) -> Report:
    """``skipped``: bug id -> why its scenarios did not run; ``not_run``: the scenarios left out
    (both from ``catalogue.select``); ``completed``: what ``conclude`` ran beyond them."""
    statuses = [
        BugStatus(bug, *status_of(bug, run, (skipped or {}).get(bug.id)), expected[bug.id]) for bug in BUGS.values()
    ]
    return Report(
        environment,
        run,
        statuses,
        outcome_of(run, statuses, unexplained(run)),
        drift_of(run, statuses, expected),
        not_run,
        completed,
    )


def conclude(
    environment: Environment,
    run: OracleRun,
    expected: dict[str, Expectation],
    skipped: dict[str, str],
    not_run: tuple[Scenario, ...],
    run_more: Callable[[list[Scenario]], OracleRun],
) -> Report:
    """The report, never concluding from part of a bug's scope a status the ledger does not expect: the
    default run leaves some of each bug's scenarios out, so where a bug's status from the part that ran
    disagrees with the ledger, its remaining scenarios are run (``run_more``) before the report is made."""
    report = build_report(environment, run, expected, skipped, not_run)
    rest = {
        b.bug.id: [s for s in not_run if s.apis & set(b.bug.apis)]
        for b in report.bugs
        if b.status in (Status.PRESENT, Status.FIXED, Status.INCOMPLETE_FIX) and not b.matches_expectation
    }
    more = list(dict.fromkeys(s for scenarios in rest.values() for s in scenarios))
    if not more:
        return report
    extra = run_more(more)
    merged = OracleRun(
        run.results + extra.results,
        list(dict.fromkeys(run.warnings + extra.warnings)),
        run.cannot_test or extra.cannot_test,
    )
    completed = tuple((bug_id, len(scenarios)) for bug_id, scenarios in rest.items() if scenarios)
    return build_report(environment, merged, expected, skipped, tuple(s for s in not_run if s not in more), completed)


def conclusion(report: Report) -> str:
    """One line a maintainer can paste: what is broken, what works, and versus the ledger."""
    return f"{headline(report)} {versus_ledger(report)}"


def headline(report: Report) -> str:
    """What this run observed, in one sentence, without the ledger."""
    run = report.run
    if report.outcome == Outcome.CANNOT_TEST:
        why = run.cannot_test or "no catalogued bug applies to this torch"
        return f"Cannot test on torch {report.environment.torch_version}: {why}."
    present = [b.bug.id for b in report.bugs if b.status == Status.PRESENT]
    incomplete = [b.bug.id for b in report.bugs if b.status == Status.INCOMPLETE_FIX]
    counts = Counter(r.verdict for r in run.results)
    tally = ", ".join(f"{n} {verdict}" for verdict, n in sorted(counts.items()))
    checked = [b for b in report.bugs if b.status in (Status.PRESENT, Status.FIXED, Status.INCOMPLETE_FIX)]
    head = (
        f"{len(present)} of the {len(checked)} catalogued bugs checked present ({', '.join(present)})"
        if present
        else f"None of the {len(checked)} catalogued bugs checked is present"
    )
    if incomplete:
        head += f"; an incomplete fix (its error gone or refused, its APIs still depart): {', '.join(incomplete)}"
    if report.outcome == Outcome.DIFFERENT:
        head += f"; {len(report.unexplained())} scenario runs show a departure no catalogued bug explains"
    return f"{head}; {tally} across {len(run.results)} scenario runs."


def versus_ledger(report: Report) -> str:
    """The sentence that says whether the run agrees with the ledger."""
    if report.matches_expectation:
        return "This is as the ledger expects."
    if report.outcome == Outcome.CANNOT_TEST and report.run.cannot_test:  # nothing measured: no comparison made
        return "Nothing could be measured here, so nothing is compared with the ledger (an environment error)."
    return f"The ledger expects otherwise for {len(report.drift)} item(s): this is drift."
