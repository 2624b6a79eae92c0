"""Human-readable sweep summaries: plain text for the terminal, Markdown for CI step summaries."""

from __future__ import annotations

from typing import Any

from repro.ledger import verdicts_of
from tracker.sweep import Outcome

HEAD = ("release", "bug", "static", "dynamic", "bytes", "requests", "evidence")
NOTHING_NEW = "No release to check: the ledger already holds every release selected (--recheck probes them again)."


def _rows(outcome: Outcome, ledger: dict[str, Any]) -> list[tuple[str, ...]]:
    """One row per release and bug; what reading the wheel cost on the release's first row; the dynamic
    verdict this run or an earlier one confirmed (the ledger's: it decides the status); the evidence
    that decided the verdict (the dynamic run's, else the static signature's first line)."""
    rows = []
    for version, entry in outcome.entries.items():
        if entry.get("yanked"):
            rows.append((version, "-", "yanked", "-", "-", "-", "-"))
            continue
        probe = entry.get("probe") or {}
        size = probe.get("wheel_size")
        share = f" ({probe.get('bytes_fetched', 0) / size:.2%})" if size else ""
        cost = (f"{probe.get('bytes_fetched', 0):,}{share}", str(probe.get("requests", "-"))) if probe else ("-", "-")
        for i, (bug_id, verdicts) in enumerate((entry.get("bugs") or {}).items()):
            recorded = verdicts_of(ledger.get("releases", {}).get(version) or {}, bug_id)
            static, dynamic = verdicts.get("static") or {}, verdicts.get("dynamic") or recorded.get("dynamic") or {}
            evidence = dynamic.get("detail") or (static.get("evidence") or ["-"])[0]
            rows.append((version if i == 0 else "", bug_id, static.get("verdict", "-"), dynamic.get("verdict", "-"),
                         *(cost if i == 0 else ("", "")), evidence))
    return rows


def _footer(ledger: dict[str, Any], found: list[str], outcome: Outcome) -> list[str]:
    lines = [f"{bug_id}: fixed_in {bug.get('fixed_in') or 'none (no release confirmed fixed)'}"
             for bug_id, bug in ledger.get("bugs", {}).items()]
    lines += [f"changed: {c}" for c in found] or ["status unchanged"]
    return lines + [f"error: {e}" for e in outcome.errors]


def text(outcome: Outcome, ledger: dict[str, Any], found: list[str]) -> str:
    if not outcome.entries:
        return "\n".join([NOTHING_NEW, "", *_footer(ledger, found, outcome)])
    rows = [HEAD, *_rows(outcome, ledger)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEAD) - 1)]
    lines = ["  ".join([*(c.ljust(w) for c, w in zip(r, widths)), r[-1]]) for r in rows]
    return "\n".join([*lines, "", *_footer(ledger, found, outcome)])


def markdown(outcome: Outcome, ledger: dict[str, Any], found: list[str]) -> str:
    lines = ["## Catalogued ScriptModule bugs: upstream check", ""]
    if outcome.entries:
        lines += ["| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in _rows(outcome, ledger)]
    else:
        lines += [NOTHING_NEW]
    return "\n".join([*lines, "", *(f"- {line}" for line in _footer(ledger, found, outcome))])
