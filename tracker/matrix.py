"""The reproducer's torch x Python matrix: which pairs to run, each run's result, and one table.

    python -m tracker.matrix plan --torch 1.13.1,2.0.0,newest --python 3.10,3.11,3.12,3.13,3.14 [--index-url URL]
    python -m tracker.matrix run --torch VERSION --out RESULT.json
    python -m tracker.matrix table RESULTS_DIR

``plan`` prints a GitHub Actions matrix (``{"include": [{"torch": ..., "python": ...}]}``) from the
index's wheel tags: a pair is kept only where the release has a CPython wheel for that Python on Linux
x86-64, so pairs torch never supported are left out rather than failed. ``newest`` is, per Python, the
index's latest stable release that is not yanked and has such a wheel; an empty plan is an error.
``run`` runs ``python -m repro --json --device cpu`` in this interpreter's environment and writes what
happened (exit code, report, last lines of stderr) to one file, even when there is no report.
``table`` reads those files and prints one Markdown table: the outcome, each catalogued
bug's status and what TorchScript said (on Python 3.14 it warns that it is unsupported).

Exit codes: 0 done; 1 the index cannot be read, or a result file is malformed (its row says how);
2 usage.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as `python tracker/matrix.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from packaging.tags import Tag
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from repro import atomic
from repro.ledger import BUG_ID, SUPPORT_CODES
from repro.sanitise import capped, cell, code_span, for_terminal, plain
from repro.versions import parse as parse_version
from tracker.index import Release, discover
from tracker.remote import FetchError, Traffic, check_url, make_session

DEFAULT_INDEX = "https://pypi.org"
NEWEST = "newest"
STDERR_LINES = 5


def supported_pythons(release: Release) -> set[str]:
    """The Pythons (``"3.11"``) this release has a CPython wheel for on Linux x86-64."""
    found = set()
    for wheel in release.wheels:
        try:
            tags: Iterable[Tag] = parse_wheel_filename(wheel.filename)[3]
        except (InvalidWheelFilename, InvalidVersion):
            continue
        for tag in tags:
            if tag.interpreter.startswith("cp3") and "linux" in tag.platform and tag.platform.endswith("x86_64"):
                found.add(f"3.{tag.interpreter[3:]}")
    return found


def plan(releases: list[Release], torch: list[str], pythons: list[str]) -> list[dict[str, str]]:
    """The (torch, python) pairs to run, in the order asked. ``newest`` is resolved per Python: the latest
    stable release, not yanked, with a Linux x86-64 CPython wheel for it (a newest release with only macOS
    wheels, or a yanked one, must not shrink the matrix). A version the index does not list, or a plan
    with no pair at all, is an error: a typo must not shrink the matrix silently."""
    usable = [r for r in releases if not (r.version.is_prerelease or r.version.is_devrelease or r.yanked)]
    by_version = {r.version: r for r in releases}
    pairs = []
    for wanted in torch:
        if wanted == NEWEST:
            for python in pythons:
                newest = max(
                    (r for r in usable if python in supported_pythons(r)), key=lambda r: r.version, default=None
                )
                pairs += [{"torch": str(newest.version), "python": python}] if newest else []
            continue
        release = by_version.get(parse_version(wanted))
        if release is None:
            raise ValueError(f"the index does not list torch {wanted}")
        supported = supported_pythons(release)
        pairs += [{"torch": str(release.version), "python": python} for python in pythons if python in supported]
    if not pairs:
        raise ValueError(
            f"no release asked for ({', '.join(torch)}) has a Linux x86-64 wheel for Python "
            f"{', '.join(pythons)}: the matrix would be empty"
        )
    return list({json.dumps(p, sort_keys=True): p for p in pairs}.values())


def run_repro(torch: str) -> dict[str, Any]:
    """``python -m repro --json --device cpu`` here, and what came of it, report or not; then
    ``--support-table --json`` (every scenario: 5-8 s more on 2.13.0 here), whose codes go under
    ``support`` (API -> codes joined by ``/``; empty when it gave none)."""
    proc = subprocess.run([sys.executable, "-m", "repro", "--json", "--device", "cpu"], capture_output=True, text=True)
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        report = None
    table_run = subprocess.run(
        [sys.executable, "-m", "repro", "--support-table", "--json", "--device", "cpu"], capture_output=True, text=True
    )
    try:
        rows = json.loads(table_run.stdout)["rows"]
        support = {row["api"]: "/".join(row["codes"]) for row in rows}
    except (ValueError, KeyError, TypeError):
        support = {}
    return {
        "torch": torch,
        "python": platform.python_version(),
        "exit_code": proc.returncode,
        "report": report if isinstance(report, dict) else None,
        "stderr": proc.stderr.strip().splitlines()[-STDERR_LINES:],
        "support": support,
    }


def write_result(out: Path, result: dict[str, Any]) -> int:
    """Write one pair's result in one rename: exit 0, or 2 with one sentence and the old file intact."""
    try:
        atomic.replace(out.resolve(), json.dumps(result, indent=2))
    except OSError as err:  # atomic.WriteError says which file and that it stays as it was
        print(for_terminal(f"matrix: error: {err}"), file=sys.stderr)
        return 2
    return 0


def _codes(text: str) -> list[str]:
    return [c if c in SUPPORT_CODES or BUG_ID.fullmatch(c) else "?" for c in text.split("/")]


def support_section(results: list[dict[str, Any]]) -> str:
    """The support table of every pair that measured one, as ``docs/support-table.md`` shows releases
    (codes, in tables that fit 100 columns); empty when none did."""
    from tracker.support_doc import overview

    # Outside text: an API name is shown only when it is one (letters, digits, _ and .); a code only when it is
    # one of ours (a support code or a catalogue id), else "?".
    pairs = {
        cell(plain(f"{r['torch']}/py{r['python']}", 40)): {
            "rows": {
                (api if re.fullmatch(r"[\w.]{1,80}", api) else "(not an API name)"): {"codes": _codes(text)}
                for api, text in r["support"].items()
            }
        }
        for r in sorted(results, key=_order)
        if PROBLEM not in r and r.get("support")
    }
    if not pairs:
        return ""
    return "\n".join(
        [
            "",
            "nn.Module APIs on a ScriptModule subclass per pair (codes as in docs/support-table.md):",
            "",
            *overview(pairs)[2:],
        ]
    )


def table(results: list[dict[str, Any]]) -> str:
    """One Markdown row per run: torch, Python, exit code, outcome, each bug's status, what was said.
    What the runs said (stderr, TorchScript's warnings) is outside text: in code spans, each cell inert;
    a result ``_read_result`` found malformed is a row saying what is wrong with it."""
    reports = [r.get("report") or {} for r in results if PROBLEM not in r]
    bug_ids = sorted({b["id"] for report in reports for b in report.get("bugs", [])})
    head = ["torch", "Python", "exit", "outcome", *bug_ids, "notes"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for result in sorted(results, key=_order):
        report = result.get("report") or {}
        status = {b["id"]: b["status"] for b in report.get("bugs", [])}
        cells = [
            plain(c, NOTE_CAP)
            for c in (
                report.get("torch_version") or result["torch"],
                result["python"],
                str(result["exit_code"]),
                report.get("outcome") or "no report",
            )
        ]
        cells += [plain(status.get(b, "-")) for b in bug_ids]
        cells.append(_notes(result))
        lines.append("| " + " | ".join(cell(c) for c in cells) + " |")
    return "\n".join(lines)


PROBLEM = "malformed"  # the key of a result that is not one: what is wrong with it
NOTE_CAP = 300  # characters of one cell


def _notes(result: dict[str, Any]) -> str:
    if PROBLEM in result:
        return plain(result[PROBLEM], NOTE_CAP)
    report = result.get("report")
    if report is None:  # no report: the last thing the run printed is the reason
        said = (result.get("stderr") or [])[-1:]
        return code_span(said[0], NOTE_CAP) if said and said[0].strip() else "no output"
    said = [report.get("cannot_test_reason"), *report.get("warnings", [])]
    return "; ".join(code_span(s, NOTE_CAP) for s in said if s) or "no TorchScript warning"


def _order(result: dict[str, Any]) -> tuple:
    try:
        torch = parse_version(result["torch"])
    except InvalidVersion:
        torch = Version("0")
    return torch, tuple(int(p) for p in result["python"].split(".")[:2] if p.isdigit())


def _list(text: str) -> list[str]:
    items = [part.strip() for part in text.split(",") if part.strip()]
    for item in items:
        if item != NEWEST:
            try:
                parse_version(item)
            except InvalidVersion:
                raise argparse.ArgumentTypeError(f"not a version: {item!r}") from None
    if not items:
        raise argparse.ArgumentTypeError(f"nothing listed: {text!r}")
    return items


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="matrix", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    planning = commands.add_parser("plan", help="print the matrix of (torch, python) pairs as JSON")
    planning.add_argument("--torch", type=_list, required=True, help=f"versions, or {NEWEST!r}")
    planning.add_argument("--python", type=_list, required=True, help="e.g. 3.10,3.11")
    planning.add_argument("--index-url", default=DEFAULT_INDEX, help="(default: %(default)s)")
    running = commands.add_parser("run", help="run the reproducer here and write its result")
    running.add_argument("--torch", required=True, help="the torch the matrix asked for (a label)")
    running.add_argument("--out", type=Path, required=True)
    tabling = commands.add_parser("table", help="print one Markdown table of the results in a folder")
    tabling.add_argument("results", type=Path)
    args = parser.parse_args(argv)

    if args.command == "run":
        problem = atomic.unwritable(args.out)
        if problem:  # now, not after the reproducer's run
            print(for_terminal(f"matrix: error: {args.out} cannot be written: {problem}"), file=sys.stderr)
            return 2
        return write_result(args.out, run_repro(args.torch))
    if args.command == "table":
        if not args.results.is_dir():
            parser.error(f"{args.results} is not a folder")
        results = [_read_result(path) for path in sorted(args.results.rglob("*.json"))]
        print(table(results) + support_section(results))
        return 1 if any(PROBLEM in result for result in results) else 0
    try:
        check_url(args.index_url)
    except FetchError as err:
        parser.error(str(err))
    try:
        releases = discover(make_session(), args.index_url, Traffic())
        print(json.dumps({"include": plan(releases, args.torch, args.python)}))
    except (FetchError, ValueError) as err:
        print(for_terminal(f"matrix: error: {err}"), file=sys.stderr)
        return 1
    return 0


def _read_result(path: Path) -> dict[str, Any]:
    """A result file ``run`` wrote; one that is not (a truncated upload, a field of the wrong type) is a
    row that says what is wrong with it (``PROBLEM``)."""
    try:
        result = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as err:
        why = err.strerror if isinstance(err, OSError) and err.strerror else "not JSON"
        return _malformed(path, f"is not a result file of `python -m tracker.matrix run` ({why})")
    problem = _problem(result)
    return _malformed(path, problem) if problem else result


def _malformed(path: Path, problem: str) -> dict[str, Any]:
    return {"torch": path.stem, "python": "?", "exit_code": "?", "report": None, PROBLEM: f"{path.name} {problem}"}


def _problem(result: object) -> str | None:
    """What makes ``result`` not a result ``run`` writes, in a few words; None when it is one."""
    if not isinstance(result, dict):
        return "is not a JSON object"
    for key, kind, what in (("torch", str, "a string"), ("python", str, "a string"), ("exit_code", int, "a number")):
        if key not in result:
            return f"has no {key!r}"
        if not isinstance(result[key], kind) or isinstance(result[key], bool):
            return f"has {key!r} that is not {what}: {_shown(result[key])}"
    support = result.get("support", {})
    if not (isinstance(support, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in support.items())):
        return f"has 'support' that is not an object of API -> cell strings: {_shown(support)}"
    stderr = result.get("stderr", [])
    if not (isinstance(stderr, list) and all(isinstance(line, str) for line in stderr)):
        return f"has 'stderr' that is not a list of lines: {_shown(stderr)}"
    report = result.get("report")
    if report is None:
        return None
    if not isinstance(report, dict):
        return f"has 'report' that is not an object: {_shown(report)}"
    for key in ("torch_version", "outcome", "cannot_test_reason"):
        if report.get(key) is not None and not isinstance(report[key], str):
            return f"has report.{key} that is not a string: {_shown(report[key])}"
    warnings = report.get("warnings", [])
    if not (isinstance(warnings, list) and all(isinstance(w, str) for w in warnings)):
        return f"has report.warnings that is not a list of strings: {_shown(warnings)}"
    bugs = report.get("bugs", [])
    if not isinstance(bugs, list):
        return f"has report.bugs that is not a list: {_shown(bugs)}"
    for bug in bugs:
        if not (isinstance(bug, dict) and isinstance(bug.get("id"), str) and isinstance(bug.get("status"), str)):
            return f"has a bug in report.bugs without a string 'id' and 'status': {_shown(bug)}"
    return None


def _shown(value: object) -> str:
    return capped(json.dumps(value), 60)


if __name__ == "__main__":
    raise SystemExit(main())
