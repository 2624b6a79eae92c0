"""Keep one pull request that carries the ledger the daily check wrote.

    python -m tracker.rolling_pr --report report.json [--base main] [--ledger repro/ledger.json]

As Renovate and Dependabot do, one branch (``upstream-check/ledger``) is rebuilt on every run from
the default branch plus the new ledger and force-pushed, and its one pull request is edited in place
while open, opened otherwise. Every ledger change but timestamps goes there (new releases checked,
status changes); a status change is named in the title and the body. A ledger that differs from the
default branch's only in timestamps proposes nothing. ``report.json`` is ``check_upstream --json``.

The branch is fetched first: when it holds a commit that is neither on the default branch nor made by
this script's own identity (a maintainer pushed to it), it is left as it is, not force-pushed; one line
says so, as does a comment on its open pull request (once per branch head) and a warning in the step
summary; the exit code is 0. The pull request is the one whose head is this branch in the base
repository's owner's repository (``--owner``, default ``$GITHUB_REPOSITORY_OWNER``, else what
``gh repo view`` says), never a fork's.
Title: one line, at most 256 characters; body: at most 60,000 characters (GitHub refuses more than
65,536), the status changes first, then as many releases' rows as fit.

Runs in a clone of the repository whose default branch is checked out, with ``git`` able to push to
``origin`` and ``gh`` logged in (``GH_TOKEN``). Exit codes: 0 done, nothing to do, or the branch left
to its other authors; 1 git or gh failed (their last line of output); 2 usage (a report or ledger that
cannot be read).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as `python tracker/rolling_pr.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from repro import atomic
from repro.sanitise import capped, code_span, one_line, plain
from tracker import history
from tracker.commands import CommandFailed, run
from tracker.summary import markdown
from tracker.sweep import Outcome

BRANCH = "upstream-check/ledger"
NAME, EMAIL = "upstream-check", "upstream-check@users.noreply.github.com"
IDENTITY = ["-c", f"user.name={NAME}", "-c", f"user.email={EMAIL}"]
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
TITLE_LIMIT, BODY_LIMIT = 256, 60_000  # GitHub: 256 for a title, 65,536 for a body
CHANGE_CAP, CHANGES_SHOWN = 300, 50  # characters of one status change line; lines listed at the top
COLUMNS = 100  # every line printed fits a 100-column terminal
MARKER = "<!-- upstream-check: left {sha} -->"  # in the comment, so that one branch head is commented once
CLOSING = "Rebuilt by the daily upstream check on each run: one branch, force-pushed unless someone else pushed to it."


def without_timestamps(value: Any) -> Any:
    """The ledger without its ``checked_at`` stamps: what decides whether there is anything to propose."""
    if isinstance(value, dict):
        return {k: without_timestamps(v) for k, v in value.items() if k != "checked_at"}
    if isinstance(value, list):
        return [without_timestamps(v) for v in value]
    return value


def changes_of(report: dict[str, Any]) -> list[history.Change]:
    """The report's status changes, as records (``ValueError``, one sentence, for any other shape)."""
    listed = report.get("changes") or []
    if not isinstance(listed, list):
        raise ValueError("the report's changes must be a list")
    return [history.Change.from_json(record) for record in listed]


def title(report: dict[str, Any]) -> str:
    """One line of at most 256 characters: the first status change, or how many releases were checked."""
    changes = changes_of(report)
    if changes:
        more = f" and {len(changes) - 1} more" if len(changes) > 1 else ""
        return capped(one_line(f"Upstream check: status changed: {changes[0]}"), TITLE_LIMIT - len(more)) + more
    return f"Upstream check: ledger updated ({len(report.get('releases') or [])} releases checked)"


def body(report: dict[str, Any], ledger: dict[str, Any]) -> str:
    """The check's Markdown summary, status changes first, within ``BODY_LIMIT`` characters: each status
    change line capped, then as many releases' rows as fit, then a line counting those left out."""
    outcome = Outcome(
        {r["version"]: r for r in report.get("releases") or []},
        list(report.get("errors") or []),
        list(report.get("unmeasurable") or []),
    )
    changes = [str(c) for c in changes_of(report)]
    head = []
    if changes:
        shown = [f"- {plain(c, CHANGE_CAP)}" for c in changes[:CHANGES_SHOWN]]
        more = [f"- {len(changes) - CHANGES_SHOWN} more: see the ledger's diff"] if len(changes) > CHANGES_SHOWN else []
        head = ["**Status changed** (time to flip the expected-failure tests):", *shown, *more, ""]
    room = BODY_LIMIT - len("\n".join([*head, "", CLOSING])) - 1
    return "\n".join([*head, markdown(outcome, ledger, changes, limit=room), "", CLOSING])


def foreign_commits(repo: Path, base: str) -> tuple[str | None, list[dict[str, str]]]:
    """The branch's head on ``origin`` (None: no such branch) and its commits that are neither on
    ``base`` nor made (authored and committed) by this script's identity. The branch and ``base`` are
    fetched first, with their whole history where the clone is shallow (as the workflow's is)."""
    listed = run(["git", "ls-remote", "--heads", "origin", f"refs/heads/{BRANCH}"], repo).split()
    if not listed:
        return None, []
    shallow = run(["git", "rev-parse", "--is-shallow-repository"], repo).strip() == "true"
    run(
        [
            "git",
            "fetch",
            "--quiet",
            "--no-tags",
            *(["--unshallow"] if shallow else []),
            "origin",
            f"+refs/heads/{BRANCH}:refs/remotes/origin/{BRANCH}",
            f"+refs/heads/{base}:refs/remotes/origin/{base}",
        ],
        repo,
    )
    fields = ("sha", "author", "author_email", "committer", "committer_email")
    log = run(
        [
            "git",
            "log",
            "--format=%H%x00%an%x00%ae%x00%cn%x00%ce",
            listed[0],
            "--not",
            base,
            f"refs/remotes/origin/{base}",
            "--",
        ],
        repo,
    )
    commits = [dict(zip(fields, line.split("\0"))) for line in log.splitlines() if line]
    own = {(NAME, EMAIL)}
    return listed[0], [
        c for c in commits if {(c["author"], c["author_email"]), (c["committer"], c["committer_email"])} - own
    ]


def open_pull_request(repo: Path, owner: str | None, gh: str) -> dict[str, Any] | None:
    """The open pull request from ``BRANCH`` of ``owner``'s repository (a fork's, same branch name, is not it)."""
    if not owner:  # outside GitHub Actions: the repository gh resolves from the clone's remotes
        found = json.loads(run([gh, "repo", "view", "--json", "owner"], repo) or "{}")
        owner = ((found.get("owner") or {}).get("login") if isinstance(found, dict) else None) or None
    fields = "number,headRefName,headRepositoryOwner,isCrossRepository,comments"
    listed = json.loads(run([gh, "pr", "list", "--head", BRANCH, "--state", "open", "--json", fields], repo) or "[]")
    for pr in listed if isinstance(listed, list) else []:
        login = ((pr.get("headRepositoryOwner") or {}).get("login") or "") if isinstance(pr, dict) else ""
        if (
            owner
            and login.lower() == owner.lower()
            and not pr.get("isCrossRepository")
            and pr.get("headRefName", BRANCH) == BRANCH
        ):
            return pr
    return None


def propose(
    repo: Path, ledger_path: str, base: str, report: dict[str, Any], gh: str = "gh", owner: str | None = None
) -> str:
    """Rebuild the branch, push it and open or edit its pull request; say what was done, in one line.
    A branch that holds someone else's commits is left as it is (see ``leave``)."""
    new = json.loads((repo / ledger_path).read_text(encoding="utf-8"))
    old = json.loads(run(["git", "show", f"{base}:{ledger_path}"], repo) or "{}")
    if without_timestamps(new) == without_timestamps(old):
        return "the ledger changed only in timestamps, or not at all: nothing to propose"
    head, foreign = foreign_commits(repo, base)
    if foreign:
        return leave(repo, head or "", foreign, open_pull_request(repo, owner, gh), gh)
    text = title(report)
    run(["git", "switch", "--force-create", BRANCH, base], repo)  # the working tree's ledger comes along
    run(["git", "add", "--", ledger_path], repo)
    run(["git", *IDENTITY, "commit", "--quiet", "-m", text, "--", ledger_path], repo)
    # Only over the head just inspected: a push to the branch since then fails this one.
    run(
        [
            "git",
            "push",
            f"--force-with-lease=refs/heads/{BRANCH}:{head or ''}",
            "origin",
            f"{BRANCH}:refs/heads/{BRANCH}",
        ],
        repo,
    )
    pr = open_pull_request(repo, owner, gh)
    with tempfile.NamedTemporaryFile("w", suffix=".md", encoding="utf-8", delete=False) as out:
        out.write(body(report, new))
    try:
        if pr is not None:
            number = str(pr["number"])
            run([gh, "pr", "edit", number, "--title", text, "--body-file", out.name], repo)
            return f"pull request #{number} updated: {text}"
        run([gh, "pr", "create", "--base", base, "--head", BRANCH, "--title", text, "--body-file", out.name], repo)
        return f"pull request opened: {text}"
    finally:
        Path(out.name).unlink()


def leave(repo: Path, head: str, foreign: list[dict[str, str]], pr: dict[str, Any] | None, gh: str) -> str:
    """Say why the branch is left as it is: on its open pull request (once per branch head) and in the
    step summary; the line to print."""
    first = foreign[0]
    count = f"{len(foreign)} commit{'s' * (len(foreign) != 1)}"
    line = f"not force-pushed: {BRANCH} holds {count} the daily check did not make ({first['sha'][:7]})"
    said = (
        f"The daily upstream check left `{BRANCH}` as it is: it holds {count} not made by the check "
        f"(the first {code_span(first['sha'][:10])}, by {code_span(first['author'], 80)}), "
        "which a force-push would drop. Today's ledger is not proposed. Merge or close this pull request "
        "and delete the branch to let the check rebuild it."
    )
    marker = MARKER.format(sha=head)
    if pr is not None and not any(
        marker in str((c or {}).get("body", "")) for c in pr.get("comments") or [] if isinstance(c, dict)
    ):
        with tempfile.NamedTemporaryFile("w", suffix=".md", encoding="utf-8", delete=False) as out:
            out.write(f"{said}\n\n{marker}\n")
        try:
            run([gh, "pr", "comment", str(pr["number"]), "--body-file", out.name], repo)
        finally:
            Path(out.name).unlink()
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        try:  # one write, opened without blocking: never half a summary, never a hang on a FIFO
            atomic.append(summary, f"> [!WARNING]\n> {said}\n")
        except atomic.WriteError as err:
            _say(f"rolling_pr: warning: GITHUB_STEP_SUMMARY cannot be written: {err.why}", sys.stderr)
    return line


def _say(line: str, file: Any = None) -> None:
    """Print one line, control characters shown as escapes, cut to the terminal's 100 columns."""
    print(one_line(line, COLUMNS), file=file or sys.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rolling_pr", description=__doc__.splitlines()[0])
    parser.add_argument("--report", type=Path, required=True, help="check_upstream --json output")
    parser.add_argument("--base", default="main", help="the default branch (default: %(default)s)")
    parser.add_argument("--ledger", default="repro/ledger.json", help="the ledger, relative to the repository")
    parser.add_argument("--gh", default="gh", help="the GitHub CLI to call (default: %(default)s)")
    parser.add_argument(
        "--owner",
        default=os.environ.get("GITHUB_REPOSITORY_OWNER")
        or os.environ.get("GITHUB_REPOSITORY", "").partition("/")[0]
        or None,
        help="the base repository's owner: only its branch's pull request is edited "
        "(default: $GITHUB_REPOSITORY_OWNER, else gh repo view's)",
    )
    args = parser.parse_args(argv)
    try:
        report = json.loads(args.report.read_text(encoding="utf-8"))
        if not isinstance(report, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as err:
        _say(f"rolling_pr: error: the report {str(args.report)!r} cannot be read: {err}", sys.stderr)
        return EXIT_USAGE
    try:
        _say(propose(Path.cwd(), args.ledger, args.base, report, args.gh, args.owner))
    except (CommandFailed, OSError, ValueError) as err:
        _say(f"rolling_pr: error: {err}", sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
