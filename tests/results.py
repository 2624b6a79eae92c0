"""Scenario results and reports built by hand, as the oracle and the report would record them: what the
tests of the catalogue, the report, the support table and the issue body feed the code under test."""

from __future__ import annotations

from collections.abc import Iterable

from repro.catalogue import BUGS, cause_of, select
from repro.catalogue.bug import Departure
from repro.engine.models import styles_of
from repro.engine.oracle import OracleRun, ScenarioResult, Side
from repro.engine.scenarios import SCENARIOS, Scenario
from repro.environment import Environment
from repro.ledger import Expectation
from repro.report import Report, build_report
from repro.vocabulary import Verdict

SCENARIO = {s.key: s for s in SCENARIOS}


def result(
    key: str | Scenario, style: str, verdict: str, detail: str = "", scripted: Iterable = (), eager: Iterable = ()
) -> ScenarioResult:
    """One scenario run (a scenario or its key) as the oracle records it: its verdict and each twin's hook calls."""
    return ScenarioResult(
        key if isinstance(key, Scenario) else SCENARIO[key],
        style,
        Verdict(verdict),
        detail,
        Side({"hook calls": list(scripted)}, detail if verdict == "raises" else None),
        Side({"hook calls": list(eager)}, None),
    )


def departed(found: Departure) -> ScenarioResult:
    """A bug's recorded departure (``Bug.departures``) as the oracle's result."""
    scenario = SCENARIO[found.scenario]
    return ScenarioResult(
        scenario.on(found.model) if found.model else scenario,
        found.style,
        Verdict(found.verdict),
        found.detail,
        Side(dict(found.scripted), found.detail if found.verdict == "raises" else None),
        Side(dict(found.eager), None),
    )


# Each bug's measured departures (torch 2.13.0, CPU), from its folder: "ID", or "ID (label)".
DEPARTURES = {
    f"{bug.id} ({found.label})" if found.label else bug.id: departed(found)
    for bug in BUGS.values()
    for found in bug.departures
}


ENV = Environment("2.13.0", "3.11", "cpu", "not installed")


def expectations(outcome: str = "present", **per_bug: str) -> dict[str, Expectation]:
    """The ledger's expectation for every bug: ``outcome``, or per bug (its id with ``_`` for ``-``)."""
    return {bug_id: Expectation(per_bug.get(bug_id.replace("-", "_"), outcome), "test") for bug_id in BUGS}


def report_of(
    results: list[ScenarioResult],
    expected: dict[str, Expectation] | None = None,
    cannot_test: str | None = None,
    skipped: dict[str, str] | None = None,
) -> Report:
    """The report of a run on ``ENV`` that recorded ``results``, against ``expected`` (every bug present)."""
    return build_report(ENV, OracleRun(results, [], cannot_test), expected or expectations(), skipped)


LOUD_BUGS = [bug.id for bug in BUGS.values() if bug.fixes.patch.refusal]  # those whose upstream patch refuses


def unclaimed(bug_id: str, verdict: str, detail: str, in_scope: bool = True) -> ScenarioResult:
    """A run in ``bug_id``'s scope (or, ``in_scope=False``, outside it) that no bug's recogniser claims."""
    pool = select([bug_id], slow=True).scenarios if in_scope else SCENARIOS  # the bug's, on every shape of it
    runs = (result(s, style, verdict, detail) for s in pool for style in styles_of(s.model))
    return next(r for r in runs if BUGS[bug_id].covers(r) == in_scope and cause_of(r) is None)


def refusal(bug_id: str, in_scope: bool = True) -> ScenarioResult:
    """A run raising ``bug_id``'s loud upstream patch's refusal, as on a torch that merged that patch."""
    detail = f"RuntimeError: this model: {BUGS[bug_id].fixes.patch.refusal} (the patch's words, mid-sentence)"
    return unclaimed(bug_id, "raises", detail, in_scope)
