"""Keep one pull request that carries the ledger the daily check wrote.

    python -m tracker.rolling_pr --report report.json [--base main] [--ledger repro/ledger.json]

As Renovate and Dependabot do, one branch (``upstream-check/ledger``) is rebuilt on every run from
the default branch plus the new ledger and force-pushed, and its one pull request is edited in place
while open, opened otherwise. Every ledger change but timestamps goes there (new releases checked,
status changes); a status change is named in the title and the body. A ledger that differs from the
default branch's only in timestamps proposes nothing. ``report.json`` is ``check_upstream --json``.

Runs in a clone of the repository whose default branch is checked out, with ``git`` able to push to
``origin`` and ``gh`` logged in (``GH_TOKEN``). Exit codes: 0 done or nothing to do; 1 git or gh
failed (their last line of output); 2 usage (a report or ledger that cannot be read).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as `python tracker/rolling_pr.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tracker.summary import markdown
from tracker.sweep import Outcome

BRANCH = "upstream-check/ledger"
IDENTITY = ["-c", "user.name=upstream-check", "-c", "user.email=upstream-check@users.noreply.github.com"]
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class CommandFailed(Exception):
    """git or gh exited non-zero: its last line of output says why."""


def without_timestamps(value: Any) -> Any:
    """The ledger without its ``checked_at`` stamps: what decides whether there is anything to propose."""
    if isinstance(value, dict):
        return {k: without_timestamps(v) for k, v in value.items() if k != "checked_at"}
    if isinstance(value, list):
        return [without_timestamps(v) for v in value]
    return value


def title(report: dict[str, Any]) -> str:
    changes = report.get("changes") or []
    if changes:
        more = f" and {len(changes) - 1} more" if len(changes) > 1 else ""
        return f"Upstream check: status changed: {changes[0]}{more}"
    return f"Upstream check: ledger updated ({len(report.get('releases') or [])} releases checked)"


def body(report: dict[str, Any], ledger: dict[str, Any]) -> str:
    """The check's Markdown summary, status changes first."""
    outcome = Outcome({r["version"]: r for r in report.get("releases") or []}, list(report.get("errors") or []))
    changes = report.get("changes") or []
    head = ["**Status changed** (time to flip the expected-failure tests):", *(f"- {c}" for c in changes), ""]
    return "\n".join([*(head if changes else []), markdown(outcome, ledger, changes),
                      "", "Rebuilt by the daily upstream check on each run: one branch, force-pushed."])


def _run(args: list[str], cwd: Path) -> str:
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        said = (proc.stderr.strip() or proc.stdout.strip() or f"exit code {proc.returncode}").splitlines()[-1]
        raise CommandFailed(f"{' '.join(args[:3])}: {said}")
    return proc.stdout


def propose(repo: Path, ledger_path: str, base: str, report: dict[str, Any], gh: str = "gh") -> str:
    """Rebuild the branch, push it and open or edit its pull request; say what was done, in one line."""
    new = json.loads((repo / ledger_path).read_text(encoding="utf-8"))
    old = json.loads(_run(["git", "show", f"{base}:{ledger_path}"], repo) or "{}")
    if without_timestamps(new) == without_timestamps(old):
        return "the ledger changed only in timestamps, or not at all: nothing to propose"
    text = title(report)
    _run(["git", "switch", "--force-create", BRANCH, base], repo)  # the working tree's ledger comes along
    _run(["git", "add", ledger_path], repo)
    _run(["git", *IDENTITY, "commit", "--quiet", "-m", text], repo)
    _run(["git", "push", "--force", "origin", f"{BRANCH}:{BRANCH}"], repo)
    with tempfile.NamedTemporaryFile("w", suffix=".md", encoding="utf-8", delete=False) as out:
        out.write(body(report, new))
    try:
        listed = json.loads(_run([gh, "pr", "list", "--head", BRANCH, "--state", "open", "--json", "number"], repo))
        if listed:
            number = str(listed[0]["number"])
            _run([gh, "pr", "edit", number, "--title", text, "--body-file", out.name], repo)
            return f"pull request #{number} updated: {text}"
        _run([gh, "pr", "create", "--base", base, "--head", BRANCH, "--title", text, "--body-file", out.name], repo)
        return f"pull request opened: {text}"
    finally:
        Path(out.name).unlink()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rolling_pr", description=__doc__.splitlines()[0])
    parser.add_argument("--report", type=Path, required=True, help="check_upstream --json output")
    parser.add_argument("--base", default="main", help="the default branch (default: %(default)s)")
    parser.add_argument("--ledger", default="repro/ledger.json", help="the ledger, relative to the repository")
    parser.add_argument("--gh", default="gh", help="the GitHub CLI to call (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        report = json.loads(args.report.read_text(encoding="utf-8"))
        if not isinstance(report, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as err:
        print(f"rolling_pr: error: the report {str(args.report)!r} cannot be read: {err}", file=sys.stderr)
        return EXIT_USAGE
    try:
        print(propose(Path.cwd(), args.ledger, args.base, report, args.gh))
    except (CommandFailed, OSError, ValueError) as err:
        print(f"rolling_pr: error: {err}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
