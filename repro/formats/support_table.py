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
from typing import Any

from repro.catalogue import BUGS, cause_of, refused_by_patch
from repro.engine.by_design import DESIGNED
from repro.engine.oracle import ScenarioResult
from repro.engine.scenarios.table import find_api
from repro.environment import Environment
from repro.vocabulary import Verdict

WIDTH = 100
API_WIDTH = 36  # a longer API name (torch.nn.utils.parametrizations.spectral_norm) has a row of its own
STYLE_WORDS = {
    "script_method": "with @script_method",
    "plain_forward": "with a plain forward",
    "torch.jit.script": "as a torch.jit.script-ed child",
}


SCHEMA = 1  # of ``--support-table --json``: rows of api, cell, codes, left_out, outcomes
# The codes a cell is made of, in the order a cell lists them (bug ids, in catalogue order, where BUG is).
CODES = ("ok", "BUG", "design", "undocumented", "unexplained", "absent", "not-run", "eager-fails")


@dataclass(frozen=True)
class Outcome:
    """One way an API behaved (``code``, and ``what`` in words), and exactly the runs it holds for
    (``where``; empty: every run of the API that this release could run)."""

    code: str  # one of CODES, or a catalogued bug's id
    what: str  # works | raises: BUG | differs: BUG | refused by design (FILE:LINE) | ...
    where: tuple[str, ...] = ()


@dataclass(frozen=True)
class SupportRow:
    api: str
    outcomes: tuple[Outcome, ...]
    left_out: int = 0  # runs of scenarios needing a feature (a keyword, a function) this release lacks

    @property
    def cell(self) -> str:
        """The outcomes in one line, in code order, each with the runs it holds for where they differ."""
        return "; ".join(o.what + (f" ({' · '.join(o.where)})" if o.where else "") for o in self.outcomes)

    @property
    def codes(self) -> tuple[str, ...]:
        """Each code once ("raises: X" and "differs: X" are both X), in code order."""
        return tuple(dict.fromkeys(o.code for o in self.outcomes))


def outcome_of(result: ScenarioResult) -> tuple[str, str]:
    """What one scenario run says about its API: (code, words)."""
    if result.verdict == Verdict.MATCH:
        return "ok", "works"
    if result.verdict == Verdict.REFUSED:
        kind, _, where = result.detail.rpartition("(")[2].rstrip(")").partition(": ")
        raised = result.scripted is None or result.scripted.error  # a difference by design raises nothing
        code = "design" if kind == DESIGNED else "undocumented"
        return (
            code,
            f"{'refused' if raised else 'differs'} {'by design' if code == 'design' else 'undocumented'} ({where})",
        )
    if result.verdict in (Verdict.RAISES, Verdict.DIFFERS):
        cause = cause_of(result)
        if cause:
            return cause, f"{result.verdict}: {cause}"
        refuser = refused_by_patch(result)
        return (
            (refuser, f"refused: {refuser}'s patch") if refuser else ("unexplained", f"{result.verdict}: unexplained")
        )
    if result.verdict == Verdict.NOT_RUN:
        return "not-run", result.detail
    return {Verdict.UNAVAILABLE: ("absent", "absent"), Verdict.ERROR: ("eager-fails", "eager fails")}.get(
        result.verdict, ("unexplained", result.detail)
    )


def support_rows(results: list[ScenarioResult]) -> list[SupportRow]:
    """One row per API, sorted by name. A run whose scenario needs a feature this torch lacks while the
    API itself exists is left out of the cell and counted (``left_out``): ``absent`` means the API."""
    by_api: dict[str, list[ScenarioResult]] = defaultdict(list)
    for result in results:
        by_api[result.scenario.api].append(result)
    rows = []
    for api, runs in sorted(by_api.items()):
        kept = [r for r in runs if r.verdict != Verdict.UNAVAILABLE or find_api(api) is None]
        rows.append(SupportRow(api, _outcomes(kept), len(runs) - len(kept)))
    return rows


def _order(code: str) -> tuple[int, int]:
    bugs = list(BUGS)
    return (1, bugs.index(code)) if code in BUGS else (CODES.index(code), 0)


def _outcomes(runs: list[ScenarioResult]) -> tuple[Outcome, ...]:
    seen: dict[tuple[str, str], list[ScenarioResult]] = defaultdict(list)
    for run in runs:
        seen[outcome_of(run)].append(run)
    ordered = sorted(seen.items(), key=lambda item: _order(item[0][0]))
    if len(ordered) == 1:
        (code, what), _ = ordered[0]
        return (Outcome(code, what),)
    return tuple(Outcome(code, what, _conditions(these, runs)) for (code, what), these in ordered)


def _conditions(these: list[ScenarioResult], runs: list[ScenarioResult]) -> tuple[str, ...]:
    """Exactly the runs an outcome holds for: the scenario (its ``where``, or name) where the API has
    several; the shapes, where the API ran on others too; the style and instance where the same
    scenario on the same shape behaves otherwise in another."""
    several = len({_label(r) for r in runs}) > 1
    groups: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for result in these:
        parts = [_label(result)] if several else []
        same = [r for r in runs if r.scenario.key == result.scenario.key]
        if any(r.style != result.style and outcome_of(r) != outcome_of(result) for r in same):
            parts.append(STYLE_WORDS.get(result.style, result.style))
        if any(
            r.style == result.style and r.instance != result.instance and outcome_of(r) != outcome_of(result)
            for r in same
        ):
            parts.append(f"{result.instance} instance")
        groups[tuple(parts)].append(result.scenario.model)
    labels = []
    for group, shapes in groups.items():
        ran_on = {r.scenario.model for r in runs}
        on = () if set(shapes) == ran_on else (f"on {' / '.join(dict.fromkeys(shapes))}",)
        labels.append(", ".join([*group, *on]))
    return tuple(label for label in dict.fromkeys(labels) if label)


def _label(result: ScenarioResult) -> str:
    return result.scenario.where or result.scenario.name


@dataclass(frozen=True)
class Proven:
    """What the ledger records about one bug's workaround on this release (``repro.proof`` run by the
    tracker, never again here), as a support cell names it next to the bug."""

    name: str  # the workaround, in a few words ("none" where the bug declares none)
    status: str  # one of repro.ledger.WORKAROUND_STATUSES, or "unproven" where the ledger has no proof
    on: str = ""  # the device it was proven on, where not the table's

    @property
    def words(self) -> str:
        on = f" (proven on {self.on})" if self.on else ""
        return {
            "works": f"works with workaround {self.name}{on}",
            "works-with-limits": f"works with workaround {self.name}, with limits{on}",
            "does-not-work": f"workaround {self.name} does not work{on}",
            "not-measured": "workaround not measured",
            "none": "no workaround",
        }.get(self.status, "workaround not proven on this release")


def proven(ledger_entry: dict[str, Any], table: str, device: str) -> dict[str, Proven]:
    """Per catalogued bug, its workaround's proof as the ledger's entry for this release records it; a
    proof made with another scenario table, or of another workaround (the one the bug named before),
    or none, is ``unproven``: what it ran was not this."""
    found = {}
    for bug in BUGS.values():
        proof = (ledger_entry.get("bugs", {}).get(bug.id) or {}).get("workaround") or {}
        name = bug.workaround.name if bug.workaround else "none"
        if proof.get("table") != table or proof.get("workaround") != name:
            found[bug.id] = Proven(name, "unproven")
        else:
            on = proof.get("device", "cpu")
            found[bug.id] = Proven(name, proof["status"], "" if on == device.split(":")[0] else on)
    return found


def annotated(row: SupportRow, proofs: dict[str, Proven]) -> str:
    """The row's cell with each bug's workaround, as proven: what ``--support-table`` prints."""
    return "; ".join(
        o.what
        + (f" [{proofs[o.code].words}]" if o.code in proofs else "")
        + (f" ({' · '.join(o.where)})" if o.where else "")
        for o in row.outcomes
    )


def render(environment: Environment, rows: list[SupportRow], proofs: dict[str, Proven] | None = None) -> str:
    """The Markdown table; a cell longer than the line allows goes on in rows whose API cell is empty.
    A bug's outcome says what the ledger records of its workaround on this release (``proofs``)."""
    api_width = min(API_WIDTH, max(len("API"), *(len(r.api) + 2 for r in rows)))
    room = WIDTH - api_width - 7
    lines = [
        f"ScriptModule subclass vs nn.Module on torch {environment.torch_version} (python -m repro --support-table):",
        "",
        f"| {'API'.ljust(api_width)} | {'on a ScriptModule subclass'.ljust(room)} |",
        f"|{'-' * (api_width + 2)}|{'-' * (room + 2)}|",
    ]
    for row in rows:
        cell = annotated(row, proofs) if proofs else row.cell
        parts = textwrap.wrap(cell.replace("|", "\\|"), room, break_on_hyphens=False) or [""]
        api = f"`{row.api}`"
        if len(api) > api_width:  # a long name has a row of its own; its cell starts on the next
            lines.append(f"| {api} | |")
            api = ""
        for part in parts:
            lines.append(f"| {api.ljust(api_width)} | {part.ljust(room)} |")
            api = ""
    return "\n".join(lines)


def as_dicts(rows: list[SupportRow], proofs: dict[str, Proven] | None = None) -> list[dict]:
    """The rows as JSON; with ``proofs``, each bug's outcome also says what its workaround's proof found
    (the ``cell`` stays as measured: the ledger's support columns are made of it)."""
    return [
        {
            "api": r.api,
            "cell": r.cell,
            "codes": list(r.codes),
            "left_out": r.left_out,
            "outcomes": [
                {"code": o.code, "what": o.what, "where": list(o.where)} | _workaround(o, proofs or {})
                for o in r.outcomes
            ],
        }
        for r in rows
    ]


def _workaround(outcome: Outcome, proofs: dict[str, Proven]) -> dict[str, Any]:
    found = proofs.get(outcome.code)
    return {"workaround": {"name": found.name, "status": found.status, "on": found.on}} if found else {}
