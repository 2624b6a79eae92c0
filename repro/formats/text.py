"""Plain-text output: the default report (header, one row per scenario, details, conclusion),
``--explain`` and ``--candidates``."""

from __future__ import annotations

from collections import Counter, defaultdict

from repro.candidates import CandidateResult
from repro.explain import RootCause
from repro.oracle import ScenarioResult, Side
from repro.report import Report, conclusion

COLUMNS = ("API", "SCENARIO", "SCRIPTMODULE", "EAGER", "VERDICT")


def _side(side: Side | None) -> str:
    if side is None:
        return "-"
    if side.error:
        return "raised " + side.error.split(":")[0]
    calls = len(side.observation["hook calls"])
    return f"ran, {calls} hook call{'s' * (calls != 1)}"


def _cell(results: list[ScenarioResult], text) -> str:
    """One value when both ScriptModule styles agree, else 'style: value' for each."""
    values = {r.style: text(r) for r in results}
    if len(set(values.values())) == 1:
        return next(iter(values.values()))
    return ", ".join(f"{style}: {value}" for style, value in values.items())


def rows(report: Report) -> list[tuple[str, ...]]:
    by_scenario: dict[str, list[ScenarioResult]] = defaultdict(list)
    for result in report.run.results:
        by_scenario[result.scenario.key].append(result)
    return [
        (
            results[0].scenario.api,
            results[0].scenario.name,
            _cell(results, lambda r: _side(r.script)),
            _cell(results, lambda r: _side(r.eager)),
            _cell(results, lambda r: r.verdict),
        )
        for results in by_scenario.values()
    ]


def _table(rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(row[i]) for row in [COLUMNS, *rows]) for i in range(len(COLUMNS))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in [COLUMNS, *rows]]


def render(report: Report) -> str:
    env = report.environment
    lines = [
        f"torch {env.torch_version} | Python {env.python_version} | device {env.device} | "
        f"torch_npu: {env.torch_npu}",
        *(f"TorchScript warns (shown once): {w}" for w in report.run.warnings),
        "",
    ]
    if report.run.results:
        lines += _table(rows(report))
        details = Counter(
            f"{r.verdict}: {r.detail}" for r in report.run.results if r.verdict not in ("match",)
        )
        if details:
            lines += ["", "Details:"]
            lines += [f"  {text}  (x{n})" for text, n in details.items()]
    if report.drift:
        lines += ["", "Drift from the ledger:", *(f"  - {d}" for d in report.drift)]
    lines += ["", conclusion(report)]
    return "\n".join(lines)


def render_explanation(torch_version: str, cause: RootCause) -> str:
    steps = [f"{i}. {step}" for i, step in enumerate(cause.chain(), start=1)]
    return "\n".join([f"Root cause on torch {torch_version}:", *steps])


def render_candidates(torch_version: str, device: str, results: list[CandidateResult]) -> str:
    yes_no = {True: "yes", False: "no", None: "?"}
    lines = [f"Candidate fixes on torch {torch_version}, each judged by every scenario "
             f"in a process of its own (device {device}):", ""]
    for r in results:
        lines += [
            f"{r.candidate.name} ({r.candidate.side} side): {r.candidate.summary}",
            f"  registration succeeds: {yes_no[r.registers]}; full backward hook fires: {yes_no[r.hook_fires]}; "
            f"{r.matches}/{r.total} scenarios match eager",
            f"  verdict: {r.verdict.upper()}: {r.detail}",
        ]
    lines += ["", "Only a candidate whose every scenario matches eager counts as a fix; "
              "'hides the error' means registration succeeds but hooks still misbehave."]
    return "\n".join(lines)
