"""Keep one issue that says which upstream patches no longer apply to pytorch/pytorch main.

    python -m tracker.rolling_issue --report report.json [--gh gh]

``report.json`` is ``tracker.patches_on_main --checkout``'s. While some patch is refused, one open issue
(``TITLE``, found by the marker its body carries, never by title alone) holds the latest table: it is
opened when none is open, its body rewritten on each run, and a comment is added only when a patch
stops applying that applied before (so that watchers hear of each new refusal once). When every patch
applies again, the open issue gets one comment naming the commit and is closed. Runs where ``gh`` is
logged in (``GH_TOKEN``) in a clone of the repository. Exit codes: 0 done or nothing to do; 1 gh
failed (its last line); 2 a report that cannot be read; 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):  # run as `python tracker/rolling_issue.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from repro.sanitise import code_span, one_line
from tracker.commands import CommandFailed, run
from tracker.patches_on_main import MainCheck, commit_link, read_report, summary

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
TITLE = "Upstream patches that no longer apply to pytorch/pytorch main"
MARKER = re.compile(r"<!-- patches-on-main refused=([\w,.-]*) -->")


def body(found: MainCheck) -> str:
    """The issue's body: the check's table, and the marker that names what it refused."""
    return (
        f"{summary(found)}\n"
        "Each refused patch needs its edit re-located for main's files: `python -m repro --patch --bug ID "
        "--against PYTORCH_CHECKOUT` says why in one sentence.\n\n"
        f"<!-- patches-on-main refused={','.join(found.refused)} -->\n"
    )


def open_issue(gh: str) -> tuple[str, set[str]] | None:
    """The open issue this script keeps and the bugs its body says were refused, or None."""
    fields = ["--state", "open", "--search", f'"{TITLE}" in:title', "--json", "number,body"]
    listed = json.loads(_gh(gh, "issue", "list", *fields) or "[]")
    for issue in listed if isinstance(listed, list) else []:
        found = MARKER.search(str(issue.get("body") or "")) if isinstance(issue, dict) else None
        if found and isinstance(issue.get("number"), int):
            return str(issue["number"]), set(filter(None, found[1].split(",")))
    return None


def keep(found: MainCheck, gh: str = "gh") -> str:
    """Open, rewrite, comment on or close the one issue as ``found`` says; the line to print."""
    current = open_issue(gh)
    at = found.commit[:10]
    if current is None:
        if not found.refused:
            return f"every patch applies at {at}: no issue to keep"
        _gh(gh, "issue", "create", "--title", TITLE, body=body(found))
        return f"issue opened: {len(found.refused)} patches refused at {at}"
    number, before = current
    if not found.refused:
        _gh(gh, "issue", "comment", number, body=f"Every patch applies again at {commit_link(found.commit)}.\n")
        _gh(gh, "issue", "close", number, "--reason", "completed")
        return f"issue #{number} closed: every patch applies at {at}"
    _gh(gh, "issue", "edit", number, body=body(found))
    new = [bug_id for bug_id in found.refused if bug_id not in before]
    if new:
        said = ", ".join(code_span(bug_id) for bug_id in new)
        _gh(gh, "issue", "comment", number, body=f"No longer applies at {commit_link(found.commit)}: {said}.\n")
    return f"issue #{number} updated: {len(found.refused)} refused, {len(new)} newly"


def _gh(gh: str, *args: str, body: str | None = None) -> str:
    """``gh args``, with ``body`` passed in a file (as gh reads long bodies), in the current folder."""
    if body is None:
        return run([gh, *args], Path())
    with tempfile.NamedTemporaryFile("w", suffix=".md", encoding="utf-8", delete=False) as out:
        out.write(body)
    try:
        return run([gh, *args, "--body-file", out.name], Path())
    finally:
        Path(out.name).unlink()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rolling_issue", description=__doc__.splitlines()[0])
    parser.add_argument("--report", type=Path, required=True, help="tracker.patches_on_main --checkout output")
    parser.add_argument("--gh", default="gh", help="the GitHub CLI to call (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        found = read_report(args.report)
    except ValueError as err:
        print(one_line(f"rolling_issue: error: the report cannot be used: {err} ({args.report})", 100), file=sys.stderr)
        return EXIT_USAGE
    try:
        print(one_line(keep(found, args.gh), 100))
    except (CommandFailed, OSError, ValueError) as err:
        print(one_line(f"rolling_issue: error: {err}", 100), file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print("rolling_issue: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
