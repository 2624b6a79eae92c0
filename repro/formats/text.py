"""The default output: a header, one table row per scenario, the details, a conclusion."""

from __future__ import annotations

from collections import Counter, defaultdict

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
