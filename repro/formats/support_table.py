"""``--support-table``: one row per API of the installed torch, saying how a ScriptModule subclass
behaves next to ``nn.Module``, from the scenario runs.

A cell is ``works`` (every run matched eager), ``raises``/``differs`` with the catalogued bug that
explains it, ``refused by design`` with the torch line that refuses it, ``unavailable`` (this torch
lacks the API), ``not run`` (an accelerator this machine lacks) or ``eager fails`` (the scenario is
not valid on this torch). Where an API's runs disagree, the cell lists each outcome with the
condition it holds under (the scenario's ``where``, or the subclass style). Rows are the data
(``support_rows``, also in ``--json``); the Markdown keeps every line within 100 columns by
continuing a long cell on rows of its own.
"""

from __future__ import annotations

import textwrap
from collections import defaultdict
from dataclasses import dataclass

from repro.catalogue import cause_of
from repro.engine.oracle import ScenarioResult
from repro.environment import Environment

WIDTH = 100
API_WIDTH = 36  # a longer API name (torch.nn.utils.parametrizations.spectral_norm) has a row of its own
STYLE_WORDS = {
    "script_method": "with @script_method",
    "plain_forward": "with a plain forward",
    "torch.jit.script": "as a torch.jit.script-ed child",
}


@dataclass(frozen=True)
class Outcome:
    """One way an API behaved, and under which conditions (empty: in every run of the API)."""

    what: str  # works | raises: BUG | differs: BUG | refused by design (FILE:LINE) | unavailable | ...
    where: tuple[str, ...] = ()


@dataclass(frozen=True)
class SupportRow:
    api: str
    outcomes: tuple[Outcome, ...]

    @property
    def cell(self) -> str:
        """The outcomes in one line: the commonest first, each other one with its conditions."""
        return "; ".join(o.what + (f" ({', '.join(o.where)})" if o.where else "") for o in self.outcomes)


def outcome_of(result: ScenarioResult) -> str:
    """What one scenario run says about its API."""
    if result.verdict == "match":
        return "works"
    if result.verdict == "refused":
        where = result.detail.rsplit("(by design: ", 1)[-1].rstrip(")")
        raised = result.script is None or result.script.error  # a difference by design raises nothing
        return f"{'refused' if raised else 'differs'} by design ({where})"
    if result.verdict in ("raises", "differs"):
        return f"{result.verdict}: {cause_of(result) or 'no catalogued bug explains it'}"
    return {"unavailable": "unavailable", "error": "eager fails"}.get(result.verdict, result.detail)


def support_rows(results: list[ScenarioResult]) -> list[SupportRow]:
    """One row per API, in the order the scenario table first names them."""
    by_api: dict[str, list[ScenarioResult]] = defaultdict(list)
    for result in results:
        by_api[result.scenario.api].append(result)
    return [SupportRow(api, _outcomes(runs)) for api, runs in by_api.items()]


def _outcomes(runs: list[ScenarioResult]) -> tuple[Outcome, ...]:
    seen: dict[str, list[ScenarioResult]] = defaultdict(list)
    for run in runs:
        seen[outcome_of(run)].append(run)
    if len(seen) == 1:
        return (Outcome(next(iter(seen))),)
    ordered = sorted(seen.items(), key=lambda item: -len(item[1]))
    return tuple(Outcome(what, () if i == 0 else _conditions(these, runs)) for i, (what, these) in enumerate(ordered))


def _conditions(these: list[ScenarioResult], runs: list[ScenarioResult]) -> tuple[str, ...]:
    """Where an outcome holds: its scenarios' ``where`` (or names) where the API has several scenarios,
    narrowed to a style where the same scenario behaves otherwise in another style."""
    several = len({r.scenario.key for r in runs}) > 1
    labels = []
    for result in these:
        parts = [result.scenario.where or result.scenario.name] if several else []
        if any(r.scenario is result.scenario and outcome_of(r) != outcome_of(result) for r in runs):
            parts.append(STYLE_WORDS.get(result.style, result.style))
        labels.append(", ".join(parts))
    return tuple(label for label in dict.fromkeys(labels) if label)


def render(environment: Environment, rows: list[SupportRow]) -> str:
    """The Markdown table; a cell longer than the line allows goes on in rows whose API cell is empty."""
    api_width = min(API_WIDTH, max(len("API"), *(len(r.api) + 2 for r in rows)))
    room = WIDTH - api_width - 7
    lines = [
        f"ScriptModule subclass vs nn.Module on torch {environment.torch_version} (python -m repro --support-table):",
        "",
        f"| {'API'.ljust(api_width)} | {'on a ScriptModule subclass'.ljust(room)} |",
        f"|{'-' * (api_width + 2)}|{'-' * (room + 2)}|",
    ]
    for row in rows:
        parts = textwrap.wrap(row.cell.replace("|", "\\|"), room, break_on_hyphens=False) or [""]
        api = f"`{row.api}`"
        if len(api) > api_width:  # a long name has a row of its own; its cell starts on the next
            lines.append(f"| {api} | |")
            api = ""
        for part in parts:
            lines.append(f"| {api.ljust(api_width)} | {part.ljust(room)} |")
            api = ""
    return "\n".join(lines)


def as_dicts(rows: list[SupportRow]) -> list[dict]:
    return [
        {"api": r.api, "cell": r.cell, "outcomes": [{"what": o.what, "where": list(o.where)} for o in r.outcomes]}
        for r in rows
    ]
