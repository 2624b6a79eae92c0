"""Scope by exploration: each bug's scenarios built on every shape they declare, in every style and
instance, and each bug's symptom found exactly where its scope says (slow: about 7,000 runs).

A departure a bug recognises outside that bug's scope fails (the scope says less than was
measured), unless a bug whose scope holds the run explains it; a run in a bug's scope that does not
show it fails (the scope says more), unless it is refused (a different use of the API: a stub, by
design or undocumented) or another bug whose scope holds it explains it. Run on a torch where the
ledger expects the bug: the scopes are what torch 2.13.0 measured.
"""

from __future__ import annotations

from functools import cache

import pytest

from helpers import expected
from repro.catalogue import BUGS, Bug, cause_of, explain
from repro.engine.oracle import ScenarioResult, run_all
from repro.engine.scenarios import SCENARIOS

pytestmark = pytest.mark.slow
NEUTRAL = ("refused", "unavailable", "not-run", "error")


@cache
def explored() -> tuple[ScenarioResult, ...]:
    """Every scenario of any catalogued bug's APIs on every shape it declares."""
    apis = {api for bug in BUGS.values() for api in bug.apis}
    runs = [s.on(shape) for s in SCENARIOS if s.apis & apis for shape in s.shapes]
    return tuple(run_all("cpu", runs, explains=explain).results)


def _expected_present(bug: Bug) -> bool:
    return expected(bug.id).outcome == "present"


def _label(result: ScenarioResult) -> str:
    return f"{result.scenario.key} [{result.style}, {result.instance}]: {result.verdict}"


@pytest.mark.parametrize("bug", list(BUGS.values()), ids=list(BUGS))
def test_a_bugs_symptom_appears_only_inside_its_scope(bug: Bug) -> None:
    if not _expected_present(bug):
        pytest.skip(f"the ledger does not expect {bug.id} on this torch")
    outside = [
        _label(r)
        for r in explored()
        if r.verdict in ("raises", "differs")
        and r.scenario.apis & set(bug.apis)
        and (not bug.cases or r.scenario.name in bug.cases)
        and bug.recognise(r)
        and not bug.covers(r)
        and cause_of(r) is None
    ]
    assert outside == [], f"{bug.id} shows outside its scope"


@pytest.mark.parametrize("bug", list(BUGS.values()), ids=list(BUGS))
def test_every_run_in_a_bugs_scope_shows_it(bug: Bug) -> None:
    if not _expected_present(bug):
        pytest.skip(f"the ledger does not expect {bug.id} on this torch")
    ran = [r for r in explored() if bug.covers(r)]
    without = [
        _label(r) for r in ran if r.verdict not in NEUTRAL and not bug.recognise(r) and cause_of(r) in (None, bug.id)
    ]
    assert ran, f"no run of {bug.id}'s scope"
    assert without == [], f"{bug.id}'s scope holds runs without it"


def test_a_scope_names_only_shapes_its_scenarios_declare() -> None:
    declared = {(shape, style) for s in SCENARIOS for shape in s.shapes for style in ("script_method", "plain_forward")}
    declared |= {("scripted child", "torch.jit.script")}
    for bug in BUGS.values():
        assert {(shape, style) for shape, style, _ in bug.scope} <= declared, bug.id


def test_every_shape_a_scenario_declares_runs_its_eager_twin():
    """A declaration is checked, not trusted: the eager twin of every declared shape runs the body."""
    from repro.engine.oracle import absent_device, observe_eager
    from repro.engine.scenarios.table import missing_needs

    failing = [
        f"{s.key} [on {shape}]: {side.error}"
        for s in SCENARIOS
        if not missing_needs(s) and not absent_device(s)
        for shape in s.shapes
        if (side := observe_eager(s.on(shape), "cpu")).error
    ]
    assert failing == []
