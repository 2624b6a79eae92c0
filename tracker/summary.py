"""Human-readable sweep summaries: plain text for the terminal, Markdown for CI step summaries."""

from __future__ import annotations

from typing import Any

from tracker.sweep import Outcome

HEAD = ("release", "static", "dynamic", "bytes", "requests", "evidence")
NOTHING_NEW = "No release to check: the ledger already holds every release selected (--recheck probes them again)."


def _rows(outcome: Outcome) -> list[tuple[str, ...]]:
    rows = []
    for version, entry in outcome.entries.items():
        static = entry.get("static") or {}
        dynamic = (entry.get("dynamic") or {}).get("verdict", "-")
        size = static.get("wheel_size")
        share = f" ({static.get('bytes_fetched', 0) / size:.2%})" if size else ""
        rows.append((
            version,
            "yanked" if entry.get("yanked") else static.get("verdict", "-"),
            dynamic,
            f"{static.get('bytes_fetched', 0):,}{share}" if static else "-",
            str(static.get("requests", "-")),
            (static.get("evidence") or ["-"])[0],
        ))
    return rows


def _footer(ledger: dict[str, Any], found: list[str], outcome: Outcome) -> list[str]:
    lines = [f"fixed_in: {ledger.get('fixed_in') or 'none (no release confirmed fixed)'}"]
    lines += [f"changed: {c}" for c in found] or ["status unchanged"]
    return lines + [f"error: {e}" for e in outcome.errors]


def text(outcome: Outcome, ledger: dict[str, Any], found: list[str]) -> str:
    if not outcome.entries:
        return "\n".join([NOTHING_NEW, "", *_footer(ledger, found, outcome)])
    rows = [HEAD, *_rows(outcome)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEAD) - 1)]
    lines = ["  ".join([*(c.ljust(w) for c, w in zip(r, widths)), r[-1]]) for r in rows]
    return "\n".join([*lines, "", *_footer(ledger, found, outcome)])


def markdown(outcome: Outcome, ledger: dict[str, Any], found: list[str]) -> str:
    lines = ["## ScriptModule backward-hook bug: upstream check", ""]
    if outcome.entries:
        lines += ["| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in _rows(outcome)]
    else:
        lines += [NOTHING_NEW]
    return "\n".join([*lines, "", *(f"- {line}" for line in _footer(ledger, found, outcome))])
