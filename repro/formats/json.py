"""``--json``: one JSON object, stable keys, for the tracker and other machines."""

from __future__ import annotations

import json
import sysconfig
from collections.abc import Mapping
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from repro.engine.oracle import ScenarioResult
from repro.engine.scenarios import fingerprint
from repro.environment import Environment
from repro.formats import Material, support_table
from repro.proof import Proof
from repro.report import SCHEMA, BugStatus, Report, conclusion, scenario_summary

if TYPE_CHECKING:  # --explore only: it needs Hypothesis
    from repro.explore.run import Exploration, Found

PROOFS_SCHEMA = 1  # of ``--workarounds --json``
EXPLORATION_SCHEMA = 1  # of ``--explore --json``


def scenario_as_dict(result: ScenarioResult) -> dict[str, Any]:
    return {
        **scenario_summary(result),
        "scripted": asdict(result.scripted) if result.scripted else None,
        "eager": asdict(result.eager) if result.eager else None,
    }


def _bug(status: BugStatus, cause: list[str] | None) -> dict[str, Any]:
    return {
        "id": status.bug.id,
        "title": status.bug.title,
        "upstream": status.bug.upstream,
        "status": status.status,
        "detail": status.detail,
        "expected": asdict(status.expected),
        "matches_expectation": status.matches_expectation,
        "root_cause": cause,
    }


def as_dict(report: Report, causes: Mapping[str, list[str] | None]) -> dict[str, Any]:
    """The report; each bug's ``root_cause`` is its steps measured on this torch where ``causes`` holds
    them (the bugs a run names with --bug), else null."""
    env = report.environment
    return {
        "schema": SCHEMA,
        "torch_version": env.torch_version,
        "python_version": env.python_version,
        "platform": sysconfig.get_platform(),
        "device": env.device,
        "torch_npu": env.torch_npu,
        "outcome": report.outcome,
        "bug_present": report.bug_present,
        "cannot_test_reason": report.run.cannot_test,
        "warnings": report.run.warnings,
        "bugs": [_bug(b, causes.get(b.bug.id)) for b in report.bugs],
        "scenarios": [scenario_as_dict(r) for r in report.run.results],
        "support": support_table.as_dicts(support_table.support_rows(report.run.results)),
        "scenario_table": fingerprint(),
        "not_run": [{"api": s.api, "name": s.name, "tier": s.tier} for s in report.not_run],
        "completed": {bug_id: n for bug_id, n in report.completed},
        "matches_expectation": report.matches_expectation,
        "drift": report.drift,
        "conclusion": conclusion(report),
    }


def render(report: Report, material: Material) -> str:
    return json.dumps(as_dict(report, material.causes), indent=2)


def render_proofs(environment: Environment, proofs: list[Proof]) -> str:
    """``--workarounds --json``: where it was measured, and per bug what its workaround's proof found."""
    return json.dumps(
        {
            "schema": PROOFS_SCHEMA,
            "torch_version": environment.torch_version,
            "python_version": environment.python_version,
            "platform": sysconfig.get_platform(),
            "device": environment.device,
            "scenario_table": fingerprint(),
            "workarounds": [proof.as_dict() for proof in proofs],
        },
        indent=2,
    )


def render_exploration(environment: Environment, exploration: Exploration) -> str:
    """``--explore --json``: what ran and every departure found, with the script of each unexplained one
    (and, with a workaround in force, of each its bug still explains)."""
    return json.dumps(
        {"schema": EXPLORATION_SCHEMA, **_environment(environment), **_exploration(exploration)}, indent=2
    )


def render_workaround_explorations(
    environment: Environment, explorations: list[Exploration], skipped: Mapping[str, str]
) -> str:
    """``--explore --workarounds --json``: per bug tried, its exploration (``workaround`` holds the
    verdict); per bug not tried, why."""
    return json.dumps(
        {
            "schema": EXPLORATION_SCHEMA,
            **_environment(environment),
            "explorations": [{"id": e.within, **_exploration(e)} for e in explorations],
            "not_tried": [{"id": bug_id, "why": why} for bug_id, why in skipped.items()],
        },
        indent=2,
    )


def _environment(environment: Environment) -> dict[str, Any]:
    return {
        "torch_version": environment.torch_version,
        "python_version": environment.python_version,
        "device": environment.device,
    }


def _exploration(exploration: Exploration) -> dict[str, Any]:
    from repro.explore.script import script  # --explore only: it needs Hypothesis

    scripted = {id(found) for found in exploration.shown()}

    def entry(found: Found) -> dict[str, Any]:
        case, finding = found.example()
        return {
            "signature": found.finding.signature,
            "kind": finding.kind.value,
            "explanation": finding.explanation.value,
            "cause": finding.cause,
            "step": finding.what,
            "detail": finding.detail,
            "first_case": found.first,
            "cases": found.count,
            "shrunk": found.shrunk is not None,
            "without_workaround_too": found.without if exploration.workaround else None,
            "traits": case.spec.traits().as_dict(),
            "script": script(case, finding.step, finding.what) if id(found) in scripted else None,
        }

    return {
        "seed": exploration.seed,
        "budget_s": exploration.budget,
        "within": exploration.within or None,
        "workaround": (
            {
                "name": exploration.workaround,
                "verdict": exploration.workaround_verdict().value,
                "space": exploration.space(),
            }
            if exploration.workaround
            else None
        ),
        "cases": exploration.cases,
        "replayed": exploration.replayed,
        "seconds": round(exploration.seconds, 3),
        "steps_drawn": exploration.drawn,
        "apis_covered": exploration.covered,
        "fallbacks": exploration.fallbacks,
        "costs": {
            "scripted_twins_s": round(exploration.costs.scripted_s, 3),
            "eager_twins_s": round(exploration.costs.eager_s, 3),
            "torchscript_share": round(exploration.costs.torchscript_share, 3),
            "worker_peak_rss_mb": round(exploration.costs.worker_rss_mb, 1),
        },
        "departures": [entry(f) for f in sorted(exploration.found.values(), key=lambda f: f.first)],
        "unexplained": len(exploration.unexplained()),
    }
