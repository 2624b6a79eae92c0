"""Write docs/support-table.md: which nn.Module APIs work on a ScriptModule subclass, per torch release.

    python -m tracker.support_doc [--out docs/support-table.md]

The page says only what was measured. Its columns come from the ledger (``REPRO_LEDGER``, else the
shipped one): each release the tracker measured dynamically (``check_upstream --versions``, which runs
``python -m repro --json --slow``) carries one support column per device under ``support``. The newest
measured release is given as lists a backend's documentation can paste ("works as on nn.Module",
"departs"); each older release lists only the APIs whose codes differ from the newest; one note per
distinct cell names the releases it applies to; releases the ledger holds without a column say why.
Markdown tables may be wider than 100 columns; prose is wrapped within 100. Exit codes: 0 written;
2 a ledger that cannot be read, no release measured, or a page that cannot be written.
"""

from __future__ import annotations

import argparse
import ast
import sys
import textwrap
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as `python tracker/support_doc.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from packaging.version import Version

from repro import atomic
from repro import ledger as ledger_io
from repro.catalogue import BUGS
from repro.catalogue.bug import SHAPE_WORDS
from repro.engine.by_design import BY_DESIGN, DESIGNED_DIFFERENCES
from repro.sanitise import cell as table_cell
from repro.sanitise import code_names, code_span, for_terminal, inert_start, plain
from repro.source_checks import parse_python

WIDTH = 100
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "docs" / "support-table.md"
FINDINGS = Path(__file__).resolve().parents[1] / "docs" / "findings"  # the explorer's open findings
DEVICES = ("cpu", "cuda", "npu")  # the columns a backend's page has; one not measured says so
MEASURE = "python -m tracker.check_upstream --versions {}"
CODE_WORDS = {
    "ok": "works as on `nn.Module` in every run",
    "design": "refused or different by design: PyTorch's documentation or an upstream test says so (cited below)",
    "undocumented": "refused with a clear error that no PyTorch document or upstream test states as intended",
    "unexplained": "departs in a way no catalogued bug explains yet",
    "absent": "this torch lacks the API",
    "not-run": "needs an accelerator the measuring machine lacks",
    "eager-fails": "the eager twin itself fails (the scenario is not valid on that torch)",
}


def columns(ledger: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Release -> its CPU column, oldest first: those measured with the scenario table of the newest
    release's column (``table``, a hash), so that releases are compared on the same scenarios."""
    found = {
        v: e["support"]["cpu"]
        for v, e in ledger["releases"].items()
        if isinstance(e.get("support"), dict) and "cpu" in e["support"]
    }
    ordered = sorted(found, key=Version)
    table = found[ordered[-1]].get("table") if ordered else None
    return {v: found[v] for v in ordered if found[v].get("table") == table}


def codes_of(column: dict[str, Any], api: str) -> str:
    row = column["rows"].get(api)
    return "/".join(dict.fromkeys(row["codes"])) if row else "not measured"  # once each: stored before dedup


def wrapped(text: str, *, outside: bool = False) -> list[str]:
    """Prose within ``WIDTH`` columns; a list item's lines go on under its text. With ``outside`` (text
    from the ledger's cells, made ``plain``), each line after the first starts inert: a wrapped cell's
    ``-`` or ``===`` at a line's start would make a list item, a rule or a heading. Our own prose is
    left alone: a code span wrapped onto a new line would show the escape."""
    indent = "  " if text.startswith("- ") else ""
    lines = textwrap.wrap(text, WIDTH, break_on_hyphens=False, break_long_words=False, subsequent_indent=indent)
    return lines[:1] + [inert_start(line) if outside else line for line in lines[1:]]


def _api(api: str) -> str:
    return table_cell(code_span(for_terminal(api)))


def measured_section(ledger: dict[str, Any], measured: dict[str, dict[str, Any]]) -> list[str]:
    """Which releases were measured, where, and why the ledger's others were not."""
    lines = [
        "## What was measured",
        "",
        "| torch | device | Python | platform | APIs | runs left out |",
        "|---|---|---|---|---|---|",
    ]
    for version, column in measured.items():
        left = sum(row.get("left_out", 0) for row in column["rows"].values())
        lines.append(
            f"| {version} | cpu | {table_cell(plain(column['python']))} | {table_cell(plain(column['platform']))} "
            f"| {len(column['rows'])} | {left} |"
        )
    merged = sorted({d for v in measured for d in ledger["releases"][v]["support"] if d != "cpu"})
    lines += [
        "",
        f"Accelerator columns merged from device reports: {', '.join(merged)}."
        if merged
        else "CUDA and NPU columns: not measured (no such device on the measuring machine).",
        "",
    ]
    others = []
    for version in sorted(set(ledger["releases"]) - set(measured), key=Version):
        entry = ledger["releases"][version]
        if entry.get("support_legacy") or "cpu" in (entry.get("support") or {}):
            why = "measured only with an earlier scenario table than the newest release's, not shown"
        elif entry.get("not_installable") or entry.get("unmeasurable"):
            why = "could not be installed and run here"
        else:
            why = "no dynamic run (only its wheel's sources were read)"
        others.append(f"- {version}: {why}.")
    if others:
        lines += ["Releases the ledger holds without a support column, and why:", "", *others, ""]
    lines += wrapped(
        "A release not named on this page was not measured. "
        f"`{MEASURE.format('X.Y.Z')}` measures one (it installs that torch in a throwaway environment and "
        "runs `python -m repro --json --slow` there)."
    )
    return [*lines, ""]


def shapes_section() -> list[str]:
    """What each model shape a condition names is: "on child between" means that model, no other."""
    lines = ["## Model shapes the conditions name", "", "| shape | the model |", "|---|---|"]
    lines += [f"| {code_names(shape)} | {code_names(words)} |" for shape, words in SHAPE_WORDS.items()]
    return [*lines, ""]


def newest_lists(
    version: str, support: dict[str, Any], touched: dict[str, list[str]], named: dict[str, list[str]] | None = None
) -> list[str]:
    """The newest release as a backend's documentation lists it: what works on every device measured,
    and what departs on any of them, each device's codes in its row ("not measured" where no device
    report was merged). A heading names the devices it covers. An API an open finding of the explorer
    departs in (``touched``), or a catalogued bug present in the release names (``named``), is never
    listed as working, whatever its cells say."""
    named = named or {}
    measured = [d for d in DEVICES if d in support] + sorted(d for d in support if d not in DEVICES)
    apis = sorted({api for d in measured for api in support[d]["rows"]})
    works = [api for api in apis if all(codes_of(support[d], api) == "ok" for d in measured)]
    devices = ", ".join(measured)
    shown = [*DEVICES, *(d for d in measured if d not in DEVICES)]
    lines = [f"## torch {version}: works as on `nn.Module` (measured on {devices})", ""]
    lines += wrapped(", ".join(_api(api) for api in works if api not in touched and api not in named))
    found = [f"{_api(api)} ({', '.join(touched[api])})" for api in works if api in touched]
    if found:
        lines += [
            "",
            *wrapped(
                "Not listed as working, though every measured cell matches: an open finding of the explorer "
                "(at the end; found on torch 2.13.0) departs on models the table does not build: "
                + ", ".join(found)
                + "."
            ),
        ]
    by_bugs = [f"{_api(api)} ({', '.join(named[api])})" for api in works if api in named and api not in touched]
    if by_bugs:
        lines += [
            "",
            *wrapped(
                "Not listed as working, though every measured cell matches: a catalogued bug present in this "
                "release names it (it departs in a use the table's scenarios do not make): " + ", ".join(by_bugs) + "."
            ),
        ]
    lines += [
        "",
        f"## torch {version}: departs (on any of {devices})",
        "",
        "| API | " + " | ".join(shown) + " | what was measured |",
        "|---|" + "---|" * len(shown) + "---|",
    ]
    for api in (a for a in apis if a not in works):
        said = [f"{d}: {plain(support[d]['rows'][api]['cell'])}" for d in measured if api in support[d]["rows"]]
        codes = [codes_of(support[d], api) if d in support else "not measured" for d in shown]
        lines.append(f"| {_api(api)} | {' | '.join(codes)} | {table_cell('; '.join(said))} |")
    return [*lines, ""]


def workarounds_section(ledger: dict[str, Any], measured: dict[str, dict[str, Any]]) -> list[str]:
    """Per bug, what proving its workaround found on each measured release (``--workarounds``, run by
    the tracker with the same scenario table); "not proven" where the ledger records no such proof, or
    one of another workaround (the one the bug named before)."""
    versions = list(measured)
    lines = [
        "## Workarounds, proven per release",
        "",
        *wrapped(
            "Each bug's workaround judged as a fix is (`python -m repro --workarounds`, run by `check_upstream "
            "--versions`): every scenario of the bug's APIs on its scope, on a first and a later instance, at "
            "sizes 2x2, 3x2 and 1x1, each called three times, every call compared with eager's (outputs and "
            "their dtypes, every gradient, hook calls, exceptions); the verdict, where recorded (since "
            "2026-12-05), in brackets: `holds`, `loud` (a call raises) or `silently wrong`. "
            "`works-with-limits`: it holds except on the shapes it declares (docs/downstream.md says what "
            "happens there); `not-measured`: no run of the scope could show it working on that release; "
            "`none`: the bug has no workaround. `generated: holds (N)`: where the explorer ran (`check_upstream "
            "--explore`), the workaround in force on N generated models in its bug's reach, judged the same way "
            "(`python -m repro --explore --workarounds`)."
        ),
        "",
        "| bug | workaround | " + " | ".join(versions) + " |",
        "|---|---|" + "---|" * len(versions),
    ]
    for bug in BUGS.values():
        name = bug.workaround.name if bug.workaround else "none"
        statuses = []
        for version in versions:
            proof = ledger_io.verdicts_of(ledger["releases"][version], bug.id).get("workaround") or {}
            same = proof.get("table") == measured[version].get("table") and proof.get("workaround") == name
            verdict = f" ({proof['verdict']})" if proof.get("verdict") else ""
            tried = ledger_io.verdicts_of(ledger["releases"][version], bug.id).get("explored") or {}
            generated = f"; generated: {tried['verdict']} ({tried['cases']})" if tried.get("workaround") == name else ""
            shown = table_cell(plain(f"{proof['status']}{verdict}{generated}")) if proof and same else "not proven"
            statuses.append(shown)
        lines.append(f"| `{bug.id}` | {table_cell(plain(name))} | " + " | ".join(statuses) + " |")
    return [*lines, ""]


def explorer_section(ledger: dict[str, Any], apis: list[str]) -> list[str]:
    """Per release the explorer ran on (``check_upstream --explore``), what it ran and found; for the
    newest such release, how many of its cases exercised each API of the table (``apis``), and which
    it never exercised."""
    records = {
        v: e["explore"]["cpu"]
        for v, e in sorted(ledger["releases"].items(), key=lambda item: Version(item[0]))
        if "cpu" in (e.get("explore") or {})
    }
    lines = [
        "## Generated models: what the explorer ran per release",
        "",
        *wrapped(
            "`python -m repro --explore` (docs/explorer.md) builds models of depth 1-3 from every base "
            "(ScriptModule subclass with a `script_method` or a plain forward, eager, `torch.jit.script`-ed), "
            "puts each through drawn steps and compares it with its eager twin; `check_upstream --explore "
            "SECONDS` runs it on each release it confirms, on CPU, and records what it found here."
        ),
        "",
    ]
    if not records:
        return [*lines, *wrapped("No release has an explorer record yet."), ""]
    lines += [
        "| torch | cases (replayed) | seed, budget | departures | catalogued bugs found | unexplained |",
        "|---|---|---|---|---|---|",
    ]
    for version, record in records.items():
        departures = ", ".join(f"{plain(kind)} {count}" for kind, count in record["departures"].items()) or "none"
        lines.append(
            f"| {version} | {record['cases']} ({record['replayed']}) | {record['seed']}, {record['budget_s']:g} s "
            f"| {table_cell(departures)} | {len(record['bugs'])} | {len(record['unexplained'])} |"
        )
    newest, record = list(records.items())[-1]
    covered = [f"{_api(api)} {record['apis'][api]}" for api in apis if record["apis"].get(api)]
    never = [_api(api) for api in apis if not record["apis"].get(api)]
    lines += [
        "",
        *wrapped(
            f"Of the {record['cases']} cases on torch {newest}, how many exercised each API of the table: "
            + (", ".join(covered) or "none")
            + ". Never exercised (the explorer does not draw them; only the table's scenarios measure them): "
            + (", ".join(never) or "none")
            + "."
        ),
    ]
    unexplained = [f"- {plain(line)}" for line in record["unexplained"]]
    if unexplained:
        lines += ["", f"Unexplained on torch {newest} (open findings at the end):", ""]
        lines += [line for item in unexplained for line in wrapped(item, outside=True)]
    return [*lines, ""]


def older_section(newest: str, measured: dict[str, dict[str, Any]]) -> list[str]:
    """Each older release: only the APIs whose codes differ from the newest's."""
    lines = ["## Older releases: what differs from the newest", ""]
    for version in reversed([v for v in measured if v != newest]):
        column = measured[version]
        apis = sorted(set(column["rows"]) | set(measured[newest]["rows"]))
        differ = [a for a in apis if codes_of(column, a) != codes_of(measured[newest], a)]
        if not differ:
            lines.append(f"- torch {version}: as {newest}.")
            continue
        lines += wrapped(
            f"- torch {version}: "
            + "; ".join(
                f"{_api(a)} {codes_of(column, a)} (in {newest}: {codes_of(measured[newest], a)})" for a in differ
            )
        )
    return [*lines, ""]


def overview(measured: dict[str, dict[str, Any]]) -> list[str]:
    """API x release (cpu) codes, every API with its full name."""
    versions = list(measured)
    apis = sorted({api for column in measured.values() for api in column["rows"]})
    lines = ["## Overview (cpu)", "", "| API | " + " | ".join(versions) + " |", "|---|" + "---|" * len(versions)]
    lines += [f"| {_api(api)} | " + " | ".join(codes_of(measured[v], api) for v in versions) + " |" for api in apis]
    return [*lines, ""]


def notes(measured: dict[str, dict[str, Any]]) -> list[str]:
    """One note per distinct cell that is not plain ``ok``, naming the releases it applies to."""
    where: dict[tuple[str, str], list[str]] = defaultdict(list)
    for version, column in measured.items():
        for api, row in column["rows"].items():
            if row["codes"] != ["ok"] or row.get("left_out"):
                left = (
                    f" ({row['left_out']} runs left out: a feature this release lacks)" if row.get("left_out") else ""
                )
                where[api, row["cell"] + left].append(version)
    lines = ["## Notes: each cell in words, with the releases it applies to", ""]
    for (api, cell), versions in sorted(where.items()):
        text, cut, rest = cell.partition(ledger_io.CUT)
        whole = (
            f" (cut here: the ledger keeps {ledger_io.MAX_CELL:,} characters of a cell; `python -m repro "
            f"--support-table` on torch {versions[0]} prints it whole){plain(rest)}"
            if cut
            else ""
        )
        lines += wrapped(f"- {_api(api)} on {', '.join(versions)}: {plain(text.rstrip())}{whole}", outside=True)
    return [*lines, ""]


def classified() -> list[str]:
    """Every departure the table shows, classified: the bugs, the refusals by design (cited), the rest."""
    bugs = [f"- `{b.id}`: {code_names(b.symptom)}. Upstream: {b.upstream}." for b in BUGS.values()]
    designed = [f"- {code_names(e.what)}: {code_names(e.cite)}." for e in BY_DESIGN if e.designed]
    designed += [f"- {code_names(e.what)}: {code_names(e.cite)}." for e in DESIGNED_DIFFERENCES]
    undocumented = [
        f'- {code_names(e.what)}: "{code_names(e.error.strip())}" ({e.source})'
        + (f"; related: {e.related}" if e.related else "")
        + "."
        for e in BY_DESIGN
        if not e.designed
    ]
    return [
        "## Every departure, classified",
        "",
        "Catalogued bugs (`python -m repro --list-bugs`, `--explain --bug ID`, `--markdown --bug ID`):",
        "",
        *(line for item in bugs for line in wrapped(item)),
        "",
        "By design (`design`), each with the PyTorch document or upstream test that says so:",
        "",
        *(line for item in designed for line in wrapped(item)),
        "",
        "Refused, undocumented (`undocumented`): a clear refusal that no PyTorch document or upstream test",
        "states as intended; neither works nor a catalogued bug:",
        "",
        *(line for item in undocumented for line in wrapped(item)),
        "",
    ]


def findings(folder: Path = FINDINGS) -> list[tuple[str, str, list[str]]]:
    """The explorer's open findings: each script's file name, its docstring's first paragraph (what
    departs) and the APIs its ``APIs:`` line names."""
    found = []
    for path in sorted(folder.glob("*.py")):
        said = ast.get_docstring(parse_python(path.read_text(encoding="utf-8"))) or ""
        apis = [
            line.removeprefix("APIs: ").rstrip(".").split(", ")
            for line in said.splitlines()
            if line.startswith("APIs: ")
        ]
        found.append((path.name, " ".join(said.split("\n\n")[0].split()), [api for line in apis for api in line]))
    return found


def named_by_present_bugs(entry: dict[str, Any]) -> dict[str, list[str]]:
    """API -> the catalogued bugs the ledger records present in a release (``entry``) that name it."""
    named: dict[str, list[str]] = defaultdict(list)
    for bug in BUGS.values():
        if (entry.get("bugs", {}).get(bug.id, {}).get("dynamic") or {}).get("verdict") == "present":
            for api in bug.apis:
                named[api].append(bug.id)
    return dict(named)


def touched_by_findings(folder: Path = FINDINGS) -> dict[str, list[str]]:
    """API -> the open findings (file names) that name it."""
    touched: dict[str, list[str]] = defaultdict(list)
    for name, _, apis in findings(folder):
        for api in apis:
            touched[api].append(name)
    return dict(touched)


def findings_section(folder: Path = FINDINGS) -> list[str]:
    """The open findings, listed so that no reader takes "works" for what they depart in."""
    items = [f"- `docs/findings/{name}`: {code_names(said)}" for name, said, _ in findings(folder)]
    if not items:
        return []
    return [
        "## Open findings of the explorer: unexplained",
        "",
        *wrapped(
            "Departures `python -m repro --explore` found on generated models that no catalogued bug, cited "
            "design or known refusal explains (docs/explorer.md). Neither works nor a catalogued bug: an API "
            "they touch does not work as on nn.Module where they apply. Each is the script of its smallest "
            "case: it needs only torch, prints both twins' results and exits 1 while the departure is there."
        ),
        "",
        *(line for item in items for line in wrapped(item)),
        "",
    ]


def document(ledger: dict[str, Any], measured: dict[str, dict[str, Any]], today: str) -> str:
    newest = list(measured)[-1]
    legend = [f"- `{code}`: {words}" for code, words in CODE_WORDS.items()]
    legend.insert(1, "- a bug id: that catalogued bug (each is listed at the end, with its upstream report)")
    return (
        "\n".join(
            [
                "# nn.Module APIs on a torch.jit.ScriptModule subclass, per torch release",
                "",
                *wrapped(
                    f"Regenerated on {today} by `python -m tracker.support_doc` from `repro/ledger.json`. Each "
                    "cell compares a `torch.jit.ScriptModule` subclass (`@torch.jit.script_method` and plain "
                    "`forward`, first and later instances, every model shape its scenarios declare) with its "
                    "eager `nn.Module` twin in every scenario of that API. `python -m repro --support-table` "
                    "prints the installed torch's column with every condition."
                ),
                "",
                "Codes, always in this order (bug ids in catalogue order):",
                "",
                *(line for item in legend for line in wrapped(item)),
                "",
                *measured_section(ledger, measured),
                *shapes_section(),
                *newest_lists(
                    newest,
                    ledger["releases"][newest]["support"],
                    touched_by_findings(),
                    named_by_present_bugs(ledger["releases"][newest]),
                ),
                *workarounds_section(ledger, measured),
                *explorer_section(ledger, sorted(ledger["releases"][newest]["support"]["cpu"]["rows"])),
                *older_section(newest, measured),
                *overview(measured),
                *notes(measured),
                *classified(),
                *findings_section(),
            ]
        ).rstrip("\n")
        + "\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="support_doc", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        ledger = ledger_io.load(ledger_io.ledger_path())
    except ledger_io.LedgerError as problem:
        print(for_terminal(f"support_doc: error: {problem}"), file=sys.stderr)
        return 2
    measured = columns(ledger)
    if not measured:
        print(
            "support_doc: error: the ledger holds no measured support table (check_upstream --versions makes them)",
            file=sys.stderr,
        )
        return 2
    today = datetime.now(timezone.utc).date().isoformat()
    try:  # a failed write leaves the page as it was
        atomic.replace(args.out.resolve(), document(ledger, measured, today))
    except atomic.WriteError as problem:
        print(for_terminal(f"support_doc: error: {problem}"), file=sys.stderr)
        return 2
    print(f"{args.out}: {len(measured)} releases, {len(measured[list(measured)[-1]]['rows'])} APIs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
