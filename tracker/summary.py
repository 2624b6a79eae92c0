"""Human-readable sweep summaries: plain text for the terminal, Markdown for CI step summaries."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any

from repro.ledger import verdicts_of
from repro.sanitise import cell, code_span, for_terminal, plain
from tracker.history import Change
from tracker.sweep import Outcome

HEAD = ("release", "bug", "static", "dynamic", "bytes", "requests", "evidence")
WIDTH = 100  # every line of the terminal summary and the progress lines fits a 100-column terminal
NOTHING_NEW = "No release to check: the ledger already holds every release selected (--recheck probes them again)."


def _rows(outcome: Outcome, ledger: dict[str, Any]) -> list[tuple[str, ...]]:
    """One row per release and bug; what reading the wheel cost on the release's first row; the dynamic
    verdict this run or an earlier one confirmed (the ledger's: it decides the status); the evidence
    that decided the verdict (the dynamic run's, else the static signature's first line)."""
    rows: list[tuple[str, ...]] = []
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
            rows.append(
                (
                    version if i == 0 else "",
                    bug_id,
                    static.get("verdict", "-"),
                    dynamic.get("verdict", "-"),
                    *(cost if i == 0 else ("", "")),
                    evidence,
                )
            )
    return rows


def _footer(
    ledger: dict[str, Any], found: Sequence[Change | str], outcome: Outcome, markdown: bool = False
) -> list[str]:
    """The footer's lines: for the terminal, or for Markdown (the errors, what servers said, in code spans;
    the check's own lines as literal text; a bounded number of errors)."""
    own, outside = (_own_text, _outside_span) if markdown else (for_terminal, for_terminal)
    lines = [
        own(f"{bug_id}: fixed_in {bug.get('fixed_in') or 'none (no release confirmed fixed)'}")
        for bug_id, bug in ledger.get("bugs", {}).items()
    ]
    lines += [own(f"changed: {c}") for c in found] or ["status unchanged"]
    errors = [f"error: {outside(str(e))}" for e in outcome.errors]
    if markdown and len(errors) > ERRORS_SHOWN:
        errors[ERRORS_SHOWN:] = [f"{len(errors) - ERRORS_SHOWN} more errors: see the run's log"]
    given_up = [f"unmeasurable here (final, not retried): {outside(str(u))}" for u in outcome.unmeasurable]
    given_up += [f"not installable here (final for this tag): {outside(str(n))}" for n in outcome.not_installable]
    return lines + errors + given_up[:ERRORS_SHOWN] if markdown else lines + errors + given_up


def text(outcome: Outcome, ledger: dict[str, Any], found: Sequence[Change | str]) -> str:
    """The terminal summary: every cell and line on one line, control characters shown as escapes."""
    if not outcome.entries:
        return "\n".join([NOTHING_NEW, "", *_footer(ledger, found, outcome)])
    rows = [HEAD, *(tuple(for_terminal(str(c)) for c in row) for row in _rows(outcome, ledger))]
    widths = [max(len(r[i]) for r in rows[1:] + [HEAD[:-1]]) for i in range(len(HEAD) - 2)]
    lines = []
    for i, row in enumerate(rows):  # the evidence goes under its row, wrapped: rows stay narrow
        lines.append("  ".join([*(c.ljust(w) for c, w in zip(row, widths)), row[-2]]).rstrip())
        if i and row[-1] not in ("", "-"):
            lines += wrap(f"evidence: {row[-1]}", indent="    ")
    footer = [line for entry in _footer(ledger, found, outcome) for line in wrap(entry)]
    return "\n".join([*(line for row in lines for line in wrap(row)), "", *footer])


def wrap(line: str, indent: str = "", width: int = WIDTH) -> list[str]:
    """One line of the terminal summary within ``width`` columns: continuation lines indented four more."""
    if len(indent + line) <= width:
        return [indent + line]
    return textwrap.wrap(line, width, initial_indent=indent, subsequent_indent=indent + "    ", break_on_hyphens=False)


def markdown(outcome: Outcome, ledger: dict[str, Any], found: Sequence[Change | str], limit: int | None = None) -> str:
    """The step summary's Markdown: the evidence and errors (what torch, pip or a server said) in code
    spans, every other cell as literal text, so that nothing from outside renders as HTML, a link, an
    image or an @-mention; each line capped. Within ``limit`` characters, when given: the footer's
    lines first, then as many releases' rows as fit, then one line saying how many were left out."""
    lines = ["## Catalogued ScriptModule bugs: upstream check", ""]
    footer = ["", *(f"- {line}" for line in _footer(ledger, found, outcome, markdown=True))]
    if not outcome.entries:
        return "\n".join([*lines, NOTHING_NEW, *footer])
    releases = _by_release([markdown_row(row) for row in _rows(outcome, ledger)])
    lines += ["| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)]
    if limit is None:
        return "\n".join([*lines, *(row for rows in releases for row in rows), *footer])
    room = limit - len("\n".join([*lines, *footer])) - len(LEFT_OUT.format(n=len(releases))) - 2
    shown = 0
    for rows in releases:
        size = sum(len(row) + 1 for row in rows)
        if size > room:
            break
        room -= size
        lines += rows
        shown += 1
    left = [LEFT_OUT.format(n=len(releases) - shown)] if shown < len(releases) else []
    return "\n".join([*lines, *left, *footer])


LEFT_OUT = "\n{n} more releases checked are left out here: the ledger's diff holds them all."
CELL_CAP = 300  # characters of outside text in one table cell or footer line
ERRORS_SHOWN = 30  # errors listed in the Markdown footer; the rest counted


def markdown_row(row: tuple[str, ...]) -> str:
    """One table row: the last cell (the evidence) a code span, the others literal text, each capped."""
    cells = [plain(str(c), CELL_CAP) for c in row[:-1]]
    cells.append(code_span(str(row[-1]), CELL_CAP) if row[-1] not in ("", "-") else row[-1])
    return "| " + " | ".join(cell(c) for c in cells) + " |"


def _by_release(rows: list[str]) -> list[list[str]]:
    """Rows grouped by release: a release's first row names it, the rows after leave the cell empty."""
    groups: list[list[str]] = []
    for row in rows:
        if not row.startswith("|  |") or not groups:
            groups.append([])
        groups[-1].append(row)
    return groups


def _outside_span(text: str) -> str:
    return code_span(text, CELL_CAP)


def _own_text(text: str) -> str:
    return plain(text, CELL_CAP)
