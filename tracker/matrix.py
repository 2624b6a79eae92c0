"""The reproducer's torch x Python matrix: which pairs to run, each run's result, and one table.

    python -m tracker.matrix plan --torch 1.13.1,2.0.0,newest --python 3.10,3.11,3.12,3.13,3.14 [--index-url URL]
    python -m tracker.matrix run --torch VERSION --out RESULT.json
    python -m tracker.matrix table RESULTS_DIR

``plan`` prints a GitHub Actions matrix (``{"include": [{"torch": ..., "python": ...}]}``) from the
index's wheel tags: a pair is kept only where the release has a CPython wheel for that Python on Linux
x86-64, so pairs torch never supported are left out rather than failed. ``newest`` is the index's
latest stable release. ``run`` runs ``python -m repro --json --device cpu`` in this interpreter's
environment and writes what happened (exit code, report, last lines of stderr) to one file, even when
there is no report. ``table`` reads those files and prints one Markdown table: the outcome, each
catalogued bug's status and what TorchScript said (on Python 3.14 it warns that it is unsupported).

Exit codes: 0 done; 1 the index cannot be read; 2 usage.
"""

from __future__ import annotations

import argparse
import json
import platform
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
    """The (torch, python) pairs to run, in the order asked; ``newest`` is the latest stable release.
    A version the index does not list is an error: a typo must not shrink the matrix silently."""
    stable = [r for r in releases if not (r.version.is_prerelease or r.version.is_devrelease) and r.wheels]
    by_version = {r.version: r for r in releases}
    pairs = []
    for wanted in torch:
        if wanted == NEWEST:
            if not stable:
                raise ValueError("the index lists no stable release with wheels")
            release = stable[-1]
        else:
            release = by_version.get(Version(wanted))
            if release is None:
                raise ValueError(f"the index does not list torch {wanted}")
        supported = supported_pythons(release)
        pairs += [{"torch": str(release.version), "python": python} for python in pythons if python in supported]
    return list({json.dumps(p, sort_keys=True): p for p in pairs}.values())


def run_repro(torch: str) -> dict[str, Any]:
    """``python -m repro --json --device cpu`` here, and what came of it, report or not."""
    proc = subprocess.run([sys.executable, "-m", "repro", "--json", "--device", "cpu"],
                          capture_output=True, text=True)
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        report = None
    return {"torch": torch, "python": platform.python_version(), "exit_code": proc.returncode,
            "report": report if isinstance(report, dict) else None,
            "stderr": proc.stderr.strip().splitlines()[-STDERR_LINES:]}


def table(results: list[dict[str, Any]]) -> str:
    """One Markdown row per run: torch, Python, exit code, outcome, each bug's status, what was said."""
    bug_ids = sorted({b["id"] for r in results for b in (r.get("report") or {}).get("bugs", [])})
    head = ["torch", "Python", "exit", "outcome", *bug_ids, "notes"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for result in sorted(results, key=_order):
        report = result.get("report") or {}
        status = {b["id"]: b["status"] for b in report.get("bugs", [])}
        cells = [report.get("torch_version") or result["torch"], result["python"], str(result["exit_code"]),
                 report.get("outcome") or "no report", *(status.get(b, "-") for b in bug_ids), _notes(result)]
        lines.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    return "\n".join(lines)


def _notes(result: dict[str, Any]) -> str:
    report = result.get("report")
    if report is None:  # no report: the last thing the run printed is the reason
        return (result.get("stderr") or ["no output"])[-1]
    said = [report.get("cannot_test_reason"), *report.get("warnings", [])]
    return "; ".join(s for s in said if s) or "no TorchScript warning"


def _order(result: dict[str, Any]) -> tuple:
    try:
        torch = Version(result["torch"])
    except InvalidVersion:
        torch = Version("0")
    return torch, tuple(int(p) for p in result["python"].split(".")[:2] if p.isdigit())


def _list(text: str) -> list[str]:
    items = [part.strip() for part in text.split(",") if part.strip()]
    for item in items:
        if item != NEWEST:
            try:
                Version(item)
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
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(run_repro(args.torch), indent=2), encoding="utf-8")
        return 0
    if args.command == "table":
        if not args.results.is_dir():
            parser.error(f"{args.results} is not a folder")
        print(table([_read_result(path) for path in sorted(args.results.rglob("*.json"))]))
        return 0
    try:
        check_url(args.index_url)
    except FetchError as err:
        parser.error(str(err))
    try:
        releases = discover(make_session(), args.index_url, Traffic())
        print(json.dumps({"include": plan(releases, args.torch, args.python)}))
    except (FetchError, ValueError) as err:
        print(f"matrix: error: {err}", file=sys.stderr)
        return 1
    return 0


def _read_result(path: Path) -> dict[str, Any]:
    """A result file ``run`` wrote; one that is not (a truncated upload) is a row that says so."""
    try:
        result = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(result, dict) and {"torch", "python", "exit_code"} <= set(result):
            return result
    except (OSError, ValueError):
        pass
    return {"torch": path.stem, "python": "?", "exit_code": "?", "report": None,
            "stderr": [f"{path.name} is not a result file of `python -m tracker.matrix run`"]}


if __name__ == "__main__":
    raise SystemExit(main())
