"""Whether each bug's upstream patch still applies to pytorch/pytorch main: the weekly workflow's check.

    python -m tracker.patches_on_main --paths
    python -m tracker.patches_on_main --checkout PYTORCH [--summary FILE] > report.json
    python -m tracker.patches_on_main --docs docs/filing.md --report report.json

This machine cannot fetch upstream's main, so ``--patch`` is checked here against a tree in PyTorch's
shape only; the weekly workflow (.github/workflows/patches-on-main.yml) checks it where GitHub is
reachable. ``--paths`` lists the files to check out sparsely: every file a patch edits, every test
runner it registers its test with, and every new test file (so that one upstream already has is
refused, not missed). ``--checkout`` makes each bug's ``--patch --against`` diff there, checked with
``git apply --check``, and prints the report as JSON; ``--summary`` appends its Markdown table (the
job summary). ``--docs`` writes docs/filing.md's paragraph from a report: it names only a commit a
check measured, and says "not yet checked" until one has. Exit codes: 0 every patch applies (or a
mode's work done); 1 some patch no longer applies; 2 usage, a checkout or report that cannot be read;
130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as `python tracker/patches_on_main.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from repro import atomic
from repro.catalogue import BUGS
from repro.catalogue.bug import Bug
from repro.catalogue.fixes import PatchError
from repro.filing.upstream_patch import proposed_diff
from repro.sanitise import code_span, one_line, plain

EXIT_OK, EXIT_REFUSED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
COMMIT = re.compile(r"[0-9a-f]{40}")
UPSTREAM = "https://github.com/pytorch/pytorch"
BEGIN, END = "<!-- patches-on-main -->", "<!-- /patches-on-main -->"  # docs/filing.md's part written here
WHY_CAP = 300  # characters of a refusal kept in the report and shown


@dataclass(frozen=True)
class PatchRow:
    """One bug's patch on main: ``why`` is the one sentence that refused it ("" when it applies)."""

    bug_id: str
    applies: bool
    why: str = ""


@dataclass(frozen=True)
class MainCheck:
    """What one check measured: main's commit, when, and each catalogued bug's patch there."""

    commit: str
    checked_at: str
    rows: tuple[PatchRow, ...]

    @property
    def refused(self) -> tuple[str, ...]:
        return tuple(row.bug_id for row in self.rows if not row.applies)

    def to_json(self) -> dict[str, Any]:
        return {
            "commit": self.commit,
            "checked_at": self.checked_at,
            "patches": [{"bug": r.bug_id, "applies": r.applies, "why": r.why} for r in self.rows],
        }

    @classmethod
    def from_json(cls, data: object, bugs: dict[str, Bug] = BUGS) -> MainCheck:
        """A report as ``to_json`` wrote it, for exactly the catalogued bugs (``ValueError``, one sentence,
        otherwise): a report from another catalogue, or a hand-made one, names no commit here."""
        if not isinstance(data, dict):
            raise ValueError("it is not a JSON object")
        commit, stamp, patches = data.get("commit"), data.get("checked_at"), data.get("patches")
        if not isinstance(commit, str) or not COMMIT.fullmatch(commit):
            raise ValueError("its commit is not a 40-digit hexadecimal id")
        if not isinstance(stamp, str) or not _is_time(stamp):
            raise ValueError("its checked_at is not an ISO 8601 time")
        if not isinstance(patches, list) or not all(
            isinstance(p, dict)
            and isinstance(p.get("bug"), str)
            and isinstance(p.get("applies"), bool)
            and isinstance(p.get("why"), str)
            for p in patches
        ):
            raise ValueError("its patches are not a list of {bug, applies, why}")
        rows = tuple(PatchRow(p["bug"], p["applies"], p["why"]) for p in patches)
        if sorted(r.bug_id for r in rows) != sorted(bugs):
            raise ValueError("it does not hold one row per catalogued bug")
        return cls(commit, stamp, rows)


def _is_time(text: str) -> bool:
    try:
        datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


def paths(bugs: dict[str, Bug] = BUGS) -> list[str]:
    """Every file of upstream's tree a check reads: what the patches edit, their runners, their new tests."""
    found: set[str] = set()
    for bug in bugs.values():
        patch = bug.fixes.patch
        found.update(patch.files)
        found.add(patch.test.path)
        if patch.test.runner:
            found.add(patch.test.runner)
    return sorted(found)


def head_commit(checkout: Path) -> str:
    """The checkout's HEAD, as git says it (``PatchError``, one sentence, when it is not a git checkout)."""
    if shutil.which("git") is None:
        raise PatchError("git is not installed, so the checkout's commit cannot be read.")
    if not checkout.is_dir():
        raise PatchError(f"the checkout is not a folder: {checkout}")
    said = subprocess.run(["git", "rev-parse", "--verify", "HEAD"], cwd=checkout, capture_output=True, text=True)
    commit = said.stdout.strip()
    if said.returncode or not COMMIT.fullmatch(commit):
        raise PatchError(f"the checkout is not a git checkout with a commit (git rev-parse HEAD fails): {checkout}")
    return commit


def check(checkout: Path, bugs: dict[str, Bug] = BUGS, now: datetime | None = None) -> MainCheck:
    """Each bug's ``--patch --against checkout``: applies, or the sentence that refused it."""
    commit = head_commit(checkout)
    rows = []
    for bug_id, bug in bugs.items():
        try:
            proposed_diff(bug, checkout)
        except (PatchError, OSError) as problem:
            rows.append(PatchRow(bug_id, False, one_line(str(problem), WHY_CAP)))
        else:
            rows.append(PatchRow(bug_id, True))
    stamp = (now or datetime.now(timezone.utc)).isoformat(timespec="seconds")
    return MainCheck(commit, stamp, tuple(rows))


def commit_link(commit: str) -> str:
    return f"[{code_span(commit[:10])}]({UPSTREAM}/commit/{commit})"


def summary(found: MainCheck) -> str:
    """The job summary: one row per bug, whether its patch applies, and main's commit it was checked on."""
    applied = len(found.rows) - len(found.refused)
    lines = [
        "### Upstream patches on pytorch/pytorch main",
        "",
        f"{applied} of {len(found.rows)} apply with `git apply --check` at {commit_link(found.commit)} "
        f"({plain(found.checked_at)}).",
        "",
        "| bug | applies | main's commit |",
        "| --- | --- | --- |",
    ]
    for row in found.rows:
        said = "yes" if row.applies else f"**no**: {plain(row.why).replace('|', chr(92) + '|')}"
        lines.append(f"| {code_span(row.bug_id)} | {said} | {commit_link(found.commit)} |")
    return "\n".join(lines) + "\n"


def docs_text(found: MainCheck | None) -> str:
    """docs/filing.md's paragraph: "not yet checked" until a check has reported, then what it measured."""
    if found is None:
        said = (
            "**Against pytorch/pytorch main:** not yet checked. The weekly workflow `patches-on-main` has "
            "not reported; until it does, each patch is known to apply only to a tree in PyTorch's shape."
        )
    else:
        refused = ", ".join(code_span(bug_id) for bug_id in found.refused)
        said = (
            f"**Against pytorch/pytorch main:** checked at commit {commit_link(found.commit)} "
            f"({found.checked_at[:10]}) by the weekly workflow `patches-on-main`: "
            f"{len(found.rows) - len(found.refused)} of {len(found.rows)} patches apply"
            + (f"; `git apply --check` refuses {refused}." if refused else ".")
        )
    return "\n".join(textwrap.wrap(said, 100, break_long_words=False, break_on_hyphens=False))


def with_docs_text(text: str, found: MainCheck) -> str:
    """``text`` (docs/filing.md) with its part between ``BEGIN`` and ``END`` rewritten (``ValueError``
    unless it holds each marker once, in that order)."""
    lines = text.split("\n")
    if lines.count(BEGIN) != 1 or lines.count(END) != 1 or lines.index(BEGIN) > lines.index(END):
        raise ValueError(f"it does not hold {BEGIN} and {END} once each, in that order")
    start, end = lines.index(BEGIN), lines.index(END)
    return "\n".join([*lines[: start + 1], docs_text(found), *lines[end:]])


def read_report(path: Path) -> MainCheck:
    try:
        return MainCheck.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError) as err:
        raise ValueError(f"it cannot be read: {getattr(err, 'strerror', None) or err}") from None
    except json.JSONDecodeError as err:
        raise ValueError(f"it is not JSON ({err.msg}, line {err.lineno})") from None


def _say(line: str) -> None:
    print(one_line(line, 100), file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="patches_on_main", description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--paths", action="store_true", help="list the files a check reads, one per line")
    mode.add_argument("--checkout", type=Path, help="check each patch in this PyTorch checkout; JSON on stdout")
    mode.add_argument("--docs", type=Path, help="write this docs/filing.md's paragraph from --report")
    parser.add_argument("--summary", help="with --checkout: append the Markdown table to this file")
    parser.add_argument("--report", type=Path, help="with --docs: a --checkout report")
    args = parser.parse_args(argv)
    if args.paths:
        print("\n".join(paths()))
        return EXIT_OK
    if args.docs is not None:
        return _write_docs(args.docs, args.report)
    try:
        found = check(args.checkout)
    except PatchError as err:
        _say(f"patches_on_main: error: {err}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        _say("patches_on_main: interrupted; nothing was written")
        return EXIT_INTERRUPTED
    print(json.dumps(found.to_json(), indent=2))
    if args.summary:
        try:
            atomic.append(args.summary, summary(found))
        except atomic.WriteError as err:
            _say(f"patches_on_main: warning: the summary cannot be written: {err.why}")
    return EXIT_REFUSED if found.refused else EXIT_OK


def _write_docs(docs: Path, report: Path | None) -> int:
    if report is None:
        _say("patches_on_main: error: --docs needs --report, the check whose commit the paragraph names.")
        return EXIT_USAGE
    try:
        found = read_report(report)
    except ValueError as err:
        _say(f"patches_on_main: error: the report names no commit: {err} ({report})")
        return EXIT_USAGE
    try:
        atomic.replace(docs, with_docs_text(docs.read_text(encoding="utf-8"), found))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        why = getattr(err, "why", None) or getattr(err, "strerror", None) or err
        _say(f"patches_on_main: error: the docs cannot take the paragraph: {why} ({docs})")
        return EXIT_USAGE
    _say(f"patches_on_main: {docs} names commit {found.commit[:10]}")
    return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
