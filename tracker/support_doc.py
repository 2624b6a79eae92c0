"""Write docs/support-table.md: which nn.Module APIs work on a ScriptModule subclass, per torch release.

    python -m tracker.support_doc [--out docs/support-table.md]

The cells come from the ledger (``REPRO_LEDGER``, else the shipped one): each release the tracker
measured dynamically (``check_upstream --versions``, which runs ``python -m repro --json --slow``)
carries one cell per API under ``support``. The overview gives each cell as a short code, in tables of
as many releases as fit 100 columns; the newest measured release follows in full, conditions and torch
lines included. Exit codes: 0 written; 2 a ledger that cannot be read, or no release measured.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as `python tracker/support_doc.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from packaging.version import Version

from repro import atomic
from repro import ledger as ledger_io
from repro.catalogue import BUGS
from repro.catalogue.by_design import BY_DESIGN, DESIGNED_DIFFERENCES
from repro.sanitise import cell as table_cell
from repro.sanitise import code_span, for_terminal, plain

WIDTH = 100
API_WIDTH = 36
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "docs" / "support-table.md"
BUG_CODES = {bug_id: f"B{n}" for n, bug_id in enumerate(BUGS, start=1)}


def measured(ledger: dict[str, Any]) -> dict[str, dict[str, str]]:
    """Release -> API -> cell, for every release with a measured support table, oldest first."""
    releases = {v: e["support"] for v, e in ledger["releases"].items() if isinstance(e.get("support"), dict)}
    return {v: releases[v] for v in sorted(releases, key=Version)}


def code(cell: str) -> str:
    """A cell as a short code: ``ok`` works, ``B<n>`` a catalogued bug, ``D`` refused by design, ``-``
    unavailable, ``n/r`` not run here, ``e`` the eager twin itself fails (the scenario is not valid on
    that torch), ``?`` anything else; several joined by ``/``, in the cell's order."""
    codes = []
    for outcome in _outcomes(cell):
        what = outcome.split(" (")[0]  # without the conditions it holds under
        if what.startswith(("raises: ", "differs: ")):
            codes.append(BUG_CODES.get(what.split(": ", 1)[1], "?"))
        elif what.startswith("not run"):
            codes.append("n/r")
        else:
            codes.append(
                {
                    "works": "ok",
                    "refused by design": "D",
                    "differs by design": "D",
                    "unavailable": "-",
                    "eager fails": "e",
                }.get(what, "?")
            )
    return "/".join(dict.fromkeys(codes))


def _outcomes(cell: str) -> list[str]:
    """The cell's outcomes: split on ``; `` outside parentheses."""
    parts, depth, current = [], 0, ""
    for char in cell:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == ";" and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    return [*parts, current.strip()] if current.strip() else parts


def overview(releases: dict[str, dict[str, str]]) -> list[str]:
    """API x release tables of codes, as many releases to a table as fit ``WIDTH`` columns."""
    apis = sorted(dict.fromkeys(api for cells in releases.values() for api in cells))
    column = {v: max(len(v), *(len(code(cell)) for cell in cells.values())) for v, cells in releases.items()}
    versions, lines = list(releases), []
    while versions:
        group: list[str] = []
        width = API_WIDTH + 4
        while versions and (not group or width + column[versions[0]] + 3 <= WIDTH):
            group.append(versions.pop(0))
            width += column[group[-1]] + 3
        widths = [column[v] for v in group]
        head = "| " + "API".ljust(API_WIDTH) + " | " + " | ".join(v.ljust(w) for v, w in zip(group, widths)) + " |"
        rule = "|" + "-" * (API_WIDTH + 2) + "|" + "|".join("-" * (w + 2) for w in widths) + "|"
        lines += [head, rule]
        for api in apis:
            name = _api_span(api)
            cells = [code(releases[v][api]) if api in releases[v] else "" for v in group]
            lines.append(
                "| " + name.ljust(API_WIDTH) + " | " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"
            )
        lines.append("")
    return lines


def detail(version: str, cells: dict[str, str]) -> list[str]:
    """The newest release's cells in full, each wrapped within ``WIDTH`` columns."""
    room = WIDTH - API_WIDTH - 7
    lines = [
        f"| {'API'.ljust(API_WIDTH)} | {f'torch {version}'.ljust(room)} |",
        f"|{'-' * (API_WIDTH + 2)}|{'-' * (room + 2)}|",
    ]
    for api, cell in cells.items():
        name = table_cell(code_span(api))
        if len(name) > API_WIDTH:
            lines.append(f"| {name} | |")
            name = ""
        for part in _inert_lines(cell, room):
            lines.append(f"| {name.ljust(API_WIDTH)} | {part.ljust(room)} |")
            name = ""
    return lines


def _api_span(api: str) -> str:
    """An API name from the ledger as an inert code span within ``API_WIDTH``, its tail kept when cut."""
    shown = for_terminal(api)
    span = table_cell(code_span(shown))
    for keep in range(len(shown) - 1, 0, -1):
        if len(span) <= API_WIDTH:
            break
        span = table_cell(code_span("…" + shown[-keep:]))
    return span


def _inert_lines(text: str, room: int) -> list[str]:
    """A cell's text from the ledger as literal Markdown (no HTML, link, code span breakout or ``|``),
    wrapped so that each line fits ``room`` columns after escaping."""
    lines = []
    for part in textwrap.wrap(for_terminal(text), room, break_on_hyphens=False) or [""]:
        for width in range(room, 0, -1):
            pieces = textwrap.wrap(part, width, break_on_hyphens=False) or [""]
            shown = [table_cell(plain(piece)) for piece in pieces]
            if all(len(line) <= room for line in shown):
                break
        lines += shown
    return lines


def document(releases: dict[str, dict[str, str]], today: str) -> str:
    newest = list(releases)[-1]
    legend = [
        line
        for bug_id, code_ in BUG_CODES.items()
        for line in textwrap.wrap(f"- `{code_}`: {bug_id}: {BUGS[bug_id].title}", WIDTH, subsequent_indent="  ")
    ]
    return "\n".join(
        [
            "# nn.Module APIs on a torch.jit.ScriptModule subclass, per torch release",
            "",
            f"Regenerated on {today} by `python -m tracker.support_doc` from `repro/ledger.json`, whose",
            "per-release cells come from `python -m tracker.check_upstream --versions ...` (each release",
            "installed from PyPI and run on CPU with `python -m repro --json --slow`). `python -m repro",
            "--support-table` prints the installed torch's column with every condition.",
            "",
            "Each cell compares a ScriptModule subclass (both `@torch.jit.script_method` and a plain `forward`)",
            "with its eager `nn.Module` twin in every scenario of that API. Codes: `ok` works like `nn.Module`;",
            "`B<n>` a catalogued bug (below); `D` refused by design (the torch line is in the detail table);",
            "`-` unavailable (that torch lacks the API); `n/r` not run here (no such accelerator); `e` the",
            "eager twin itself fails there (the scenario is not valid on that torch); `?` an outcome no",
            "code names; several codes: the API's scenarios disagree (the detail table says where).",
            "",
            *legend,
            "",
            "## Overview",
            "",
            *overview(dict(releases)),
            f"## torch {newest} in full",
            "",
            *detail(newest, releases[newest]),
            "",
            *classified(),
        ]
    )


def classified() -> list[str]:
    """Every departure the table shows, classified: the catalogued bugs and the refusals by design."""
    bugs = [f"- `{BUG_CODES[b.id]}` {b.id}: {b.symptom}. Upstream: {b.upstream}." for b in BUGS.values()]
    refusals = [f'- {entry.what}: "{entry.error.strip()}" ({entry.source})' for entry in BY_DESIGN]
    refusals += [f"- {entry.what} ({entry.source})" for entry in DESIGNED_DIFFERENCES]
    return [
        "## Every departure, classified",
        "",
        "Bugs (each with a recogniser, a bisect script and a paste-ready script: `python -m repro",
        "--list-bugs`, `--explain --bug ID`, `--markdown --bug ID`):",
        "",
        *(line for item in bugs for line in textwrap.wrap(item, WIDTH, subsequent_indent="  ")),
        "",
        "Refused by design (`D`; the deciding line in each torch is found at run time: the detail table",
        "shows it):",
        "",
        *(line for item in refusals for line in textwrap.wrap(item, WIDTH, subsequent_indent="  ")),
        "",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tracker.support_doc", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        releases = measured(ledger_io.load(ledger_io.ledger_path()))
    except ledger_io.LedgerError as problem:
        print(f"support_doc: error: {problem}", file=sys.stderr)
        return 2
    if not releases:
        print(
            "support_doc: error: the ledger holds no measured support table (check_upstream --versions makes them)",
            file=sys.stderr,
        )
        return 2
    today = datetime.now(timezone.utc).date().isoformat()
    try:  # a failed write leaves the page as it was
        atomic.replace(args.out.resolve(), document(releases, today))
    except atomic.WriteError as problem:
        print(for_terminal(f"support_doc: error: {problem}"), file=sys.stderr)
        return 2
    print(f"{args.out}: {len(releases)} releases, {len(next(iter(releases.values())))} APIs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
