"""Release versions and notes: what ``.github/workflows/release.yml`` computes, kept out of the YAML.

The scheme (docs/release.md says why): the first release of a code version (``code-version`` of
``[tool.scriptmodule-hook-repro]`` in pyproject.toml, bumped by hand: the one place it is written) is
that version, ``0.2.0``; every later release of it, one per
ledger change, is a post-release numbered by the commit's day (UTC) and a two-digit count,
``0.2.0.post2026120301``, ``0.2.0.post2026120302`` for a second one that day. pip orders every one
after the last, a hand bump (``0.2.1``) orders after all of them and starts the suffix again, and a
commit that already has a version tag keeps that version (a rerun publishes nothing new).

    python -m tools.release plan [--commit REF] [--published PYPI_JSON]   # version=, release=, previous=
    python -m tools.release notes [--commit REF] [--version V]

The package's version comes from setuptools-scm: the release job builds with
``SETUPTOOLS_SCM_PRETEND_VERSION`` set to the planned version, and ``repro.__version__`` reads the
installed metadata. Run from a checkout, on Python 3.11 or later (``tomllib``).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

import tomllib
from packaging.version import InvalidVersion, Version

from repro import ledger as ledger_io
from repro.sanitise import code_span, for_terminal
from repro.versions import parse as parse_version
from tracker import history

TAG_PREFIX = "v"
LEDGER = "repro/ledger.json"
PYPROJECT = "pyproject.toml"
PACKAGE = "scriptmodule-hook-repro"
NOTES_LIMIT = 125_000  # characters: GitHub refuses a longer release body
ROOT = Path(__file__).resolve().parents[1]


class ReleaseError(Exception):
    """No version can be given (one sentence; exit 2)."""


# --- the version scheme: pure functions ------------------------------------------------------------


def tag_versions(tags: Iterable[str]) -> list[Version]:
    """The versions of release tags (``v`` + a PEP 440 version); other tags are left out."""
    found = []
    for tag in tags:
        tag = tag.strip()
        if not tag.startswith(TAG_PREFIX):
            continue
        try:
            found.append(parse_version(tag[len(TAG_PREFIX) :]))
        except InvalidVersion:
            continue
    return found


def code_version(text: str) -> Version:
    """``code-version`` of ``[tool.scriptmodule-hook-repro]`` in a pyproject.toml's text: a plain release
    (``0.2.0``), which the scheme extends. Anything else is one sentence."""
    try:
        table: Any = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ReleaseError(f"pyproject.toml is not TOML ({err}).") from None
    for key in ("tool", PACKAGE):
        table = table.get(key) if isinstance(table, dict) else None
    written = table.get("code-version") if isinstance(table, dict) else None
    if not isinstance(written, str):
        raise ReleaseError(f"pyproject.toml has no code-version string in [tool.{PACKAGE}].")
    try:
        version = parse_version(written)
    except InvalidVersion:
        raise ReleaseError(f"pyproject.toml's code-version {written[:40]!r} is not a PEP 440 version.") from None
    if not of_scheme(version) or version.is_postrelease:
        raise ReleaseError(
            f"pyproject.toml's code-version {version} must be a plain release such as 0.2.0: "
            "the release workflow adds the post-release suffix itself."
        )
    return version


def next_version(
    code: Version | str, day: date, existing: Iterable[Version | str], tagged: Iterable[Version | str] = ()
) -> Version:
    """The version of a release of the commit whose code version is ``code``, made on ``day``.

    ``existing``: every version released so far (the tags, and what PyPI has); ``tagged``: the versions
    tagged on this very commit. A tagged commit keeps its version (the greatest of its tags). Otherwise
    the result is greater than every existing version: ``code`` itself if it is greater than all of them
    (a hand bump: the suffix starts again), else ``code.post<YYYYMMDD><NN>``, NN counting that day's
    releases from 01 (and past the latest post-release of ``code`` if the day number alone is not).
    """
    at_commit = [Version(str(v)) for v in tagged]
    if at_commit:
        return max(at_commit)
    code = Version(str(code))
    released = [Version(str(v)) for v in existing]
    if not released or code > max(released):
        return code
    latest = max(released)
    if Version(latest.base_version) != code or latest.is_prerelease:
        raise ReleaseError(
            f"pyproject.toml's version {code} is below the latest release {latest}: "
            f"bump it by hand above {latest.base_version}."
        )
    of_code = [v.post or 0 for v in released if Version(v.base_version) == code and not v.is_prerelease]
    post = max(int(day.strftime("%Y%m%d")) * 100 + 1, max(of_code) + 1)
    if len(str(post)) != POST_DIGITS:  # past .post9999999999 (a published version so far out): not the scheme
        raise ReleaseError(
            f"the next release of {code} would be {code}.post{post}, past the scheme's {POST_DIGITS}-digit "
            f"suffix (the latest is {max(released)}): bump code-version by hand."
        )
    return Version(f"{code}.post{post}")


def previous_release(version: Version, merged: Iterable[Version | str]) -> Version | None:
    """The release before ``version`` on its history (``merged``: the tags reachable from the commit)."""
    earlier = [Version(str(v)) for v in merged if Version(str(v)) < version]
    return max(earlier) if earlier else None


@dataclass(frozen=True)
class Plan:
    version: Version
    release: bool
    previous: Version | None
    reason: str

    def lines(self) -> list[str]:
        """``key=value`` lines, as ``$GITHUB_OUTPUT`` takes them."""
        return [
            f"version={self.version}",
            f"release={str(self.release).lower()}",
            f"previous={TAG_PREFIX}{self.previous}" if self.previous else "previous=",
            f"reason={self.reason}",
        ]


POST_DIGITS = 10  # YYYYMMDDNN


def of_scheme(version: Version) -> bool:
    """A version this scheme makes: a plain release, or one's ``.postYYYYMMDDNN``; never an epoch (it would
    outrank every later release forever), a local version (PyPI refuses it) or a pre- or dev-release."""
    plain = version.epoch == 0 and version.local is None and not version.is_prerelease and not version.is_devrelease
    return plain and (version.post is None or len(str(version.post)) == POST_DIGITS)


def of_code(version: Version, code: Version | str) -> bool:
    """A version of the scheme made for ``code``: ``code`` itself or one of its post-releases. Only such a
    tag on the commit being planned is its version: a stray ``v1`` or ``v2026.12.03`` there is not."""
    return of_scheme(version) and Version(version.base_version) == Version(str(code))


def decide(
    code: Version | str,
    day: date,
    existing: Iterable[Version | str],
    tagged: Iterable[Version | str],
    merged: Iterable[Version | str],
    ledger_changed: bool,
    tags: Iterable[Version | str] | None = None,
) -> Plan:
    """Whether this commit makes a release, and which: one for a commit already tagged with the latest
    release (a rerun finishes what a failed run began), the first release, a code version not released
    yet, or a changed ledger. Versions not of the scheme count for nothing. Never a release (without
    failing: a plan that says why) for a commit tagged with an older release, or one that does not
    descend from the latest release's tagged commit (``tags``: every release tag of the repository;
    without it, ``existing``): either would publish a version above the latest that carries an older
    ledger."""
    given = list(existing)
    known = [v for v in map(_as_version, given) if of_scheme(v)]
    at_commit = list(map(_as_version, tagged))
    own = [v for v in at_commit if of_code(v, code)]
    stray = sorted({f"{TAG_PREFIX}{v}" for v in at_commit if v not in own})
    plan = _decided(code, day, given, known, own, merged, ledger_changed, tags)
    return _ignoring(plan, "the commit's", stray, f"not a version of code-version {code}")


def _ignoring(plan: Plan, whose: str, tags: list[str], why: str) -> Plan:
    """``plan`` whose reason says which tags were ignored, so that nobody wonders why one did not count."""
    if not tags:
        return plan
    return replace(
        plan, reason=f"{plan.reason} ({whose} tag{'s' if len(tags) > 1 else ''} {', '.join(tags)} ignored: {why})"
    )


def _decided(
    code: Version | str,
    day: date,
    given: list[Version | str],
    known: list[Version],
    own: list[Version],
    merged: Iterable[Version | str],
    ledger_changed: bool,
    tags: Iterable[Version | str] | None,
) -> Plan:
    reachable = list(map(_as_version, merged))
    latest = max(known) if known else None
    if own and latest is not None and max(own) < latest:
        reason = f"the commit is tagged {TAG_PREFIX}{max(own)}, older than the latest release {TAG_PREFIX}{latest}"
        return Plan(max(own), False, previous_release(max(own), reachable), reason)
    version = next_version(code, day, known, own)
    previous = previous_release(version, reachable)
    if own:
        return Plan(version, True, previous, f"the commit is already tagged {TAG_PREFIX}{version}")
    released = [v for v in map(_as_version, given if tags is None else tags) if of_scheme(v)]
    if released and max(released) not in reachable:
        reason = f"the commit does not descend from the latest release {TAG_PREFIX}{max(released)}"
        return Plan(version, False, previous, reason)
    if previous is None:
        return Plan(version, True, None, "the first release")
    if Version(str(code)) > Version(previous.base_version):
        return Plan(version, True, previous, f"the code version {code} is not released yet")
    if ledger_changed:
        return Plan(version, True, previous, f"{LEDGER} changed since {TAG_PREFIX}{previous}")
    return Plan(
        version,
        False,
        previous,
        f"nothing to release: the ledger and the code version are as in {TAG_PREFIX}{previous}",
    )


def _as_version(value: Version | str) -> Version:
    return value if isinstance(value, Version) else Version(str(value))


# --- release notes -------------------------------------------------------------------------------


def status_changes(before: dict[str, Any], after: dict[str, Any]) -> dict[str, list[str]]:
    """Per bug, the status changes ``after`` holds over ``before`` (two schema-2 ledgers), as the
    tracker's check reports them (``tracker.history.changes``), plus bugs newly tracked."""
    measured = {v: e for v, e in after["releases"].items() if e != before["releases"].get(v)}
    grouped: dict[str, list[str]] = {
        bug_id: ["newly tracked"] for bug_id in after["bugs"] if bug_id not in before["bugs"]
    }
    for change in history.changes(before, after, measured):
        grouped.setdefault(change.bug_id, []).append(str(change)[len(change.bug_id) + 2 :])
    return {bug_id: grouped[bug_id] for bug_id in sorted(grouped)}


def first_release_lines(ledger: dict[str, Any]) -> dict[str, list[str]]:
    """Per bug, what the ledger of a first release says: its fixed_in and regressions."""
    return {
        bug_id: [
            f"fixed_in {bug.get('fixed_in') or 'none'}",
            *(f"{version} regressed (present again after a confirmed fix)" for version in bug.get("regressions", [])),
        ]
        for bug_id, bug in sorted(ledger["bugs"].items())
    }


def notes(
    before: dict[str, Any] | None,
    after: dict[str, Any],
    version: Version | str,
    previous: Version | str | None,
    limit: int = NOTES_LIMIT,
) -> str:
    """The GitHub release body, Markdown: per bug, the status changes since the release whose ledger is
    ``before`` (tagged ``previous``, if named), or for a first release (``before`` None) each bug's
    fixed_in. At most ``limit`` characters: the changes that do not fit are counted, not shown."""
    head = [f"Release {code_span(str(version))} of {PACKAGE}: the ledger (`{LEDGER}`) as of this commit.", ""]
    if before is None:
        head.append("The first release. What the ledger says of each bug:")
        found = first_release_lines(after)
    else:
        since = code_span(f"{TAG_PREFIX}{previous}") if previous is not None else "the previous release"
        head.append(f"Status changes since {since}:")
        found = status_changes(before, after)
    upgrade = [
        "",
        f"Upgrade with {code_span(f'pip install --upgrade {PACKAGE}')}: a test tied to a bug with "
        "`known_upstream_bug` or `@pytest.mark.upstream_bug` follows the new ledger.",
    ]
    total = sum(map(len, found.values()))
    if not total:
        return (
            "\n".join(
                [
                    *head,
                    "",
                    "None: the ledger changed (new checks, times or evidence), but no bug's status did.",
                    *upgrade,
                ]
            )
            + "\n"
        )
    entries = [(bug_id, line) for bug_id, lines in found.items() for line in lines]
    sizes, previous = [0], None  # sizes[k]: characters the first k changes add, their bug headings included
    for bug_id, line in entries:
        heading = ["", f"### {code_span(bug_id)}"] if bug_id != previous else []
        sizes.append(sizes[-1] + sum(len(part) + 1 for part in [*heading, f"- {code_span(line)}"]))
        previous = bug_id

    def tail(left: int) -> list[str]:
        if not left:
            return upgrade
        return [
            "",
            f"... and {left} more change{'s' if left != 1 else ''}, left out to keep these notes within "
            f"{limit} characters: compare `{LEDGER}` between the tags.",
        ]

    head_size = sum(len(part) + 1 for part in head)
    shown = next(  # the most changes that fit, in order (one sum per candidate: linear in the changes)
        (k for k in range(total, -1, -1) if head_size + sizes[k] + sum(len(p) + 1 for p in tail(total - k)) <= limit),
        0,
    )
    body, previous = [], None
    for bug_id, line in entries[:shown]:
        if bug_id != previous:
            body += ["", f"### {code_span(bug_id)}"]
            previous = bug_id
        body.append(f"- {code_span(line)}")
    text = "\n".join([*head, *body, *tail(total - shown)]) + "\n"
    return text[:limit]  # cut only where the limit is too small for the head and the count of what was left out


# --- git and the command line: thin ----------------------------------------------------------------


def git(root: Path, *args: str, strict: str = "") -> str:
    """git's output as text. Bytes that are not UTF-8 (a tag name anyone who can push may choose) become
    U+FFFD, which no version holds; with ``strict`` (what the output is, for the sentence) they are
    refused in one sentence instead."""
    proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True)
    if proc.returncode != 0:
        said = proc.stderr.decode("utf-8", "replace").strip()
        raise ReleaseError(f"git {' '.join(args)}: {said or 'failed'}.")
    try:
        return proc.stdout.decode("utf-8", "strict" if strict else "replace")
    except UnicodeDecodeError as err:
        raise ReleaseError(f"{strict} is not UTF-8 (byte {err.start}).") from None


def commit_day(root: Path, commit: str) -> date:
    """The commit's committer date, in UTC: the same commit always gets the same day. A date before 2000 or
    after 9999 would not make the eight digits of ``YYYYMMDD``: refused in one sentence."""
    stamp = git(root, "show", "-s", "--format=%ct", commit).strip()
    try:
        day = datetime.fromtimestamp(int(stamp), timezone.utc).date()
    except (ValueError, OverflowError, OSError):
        raise ReleaseError(f"the commit {commit} has a committer date git shows as {stamp[:40]!r}.") from None
    if not date(2000, 1, 1) <= day <= date(9999, 12, 31):
        raise ReleaseError(f"the commit {commit} is dated {day}: a release needs a date from 2000 to 9999.")
    return day


def ledger_at(root: Path, ref: str) -> dict[str, Any]:
    """The ledger as committed at ``ref``, validated (and migrated from schema 1) as the package reads it."""
    path = Path(f"{ref}:{LEDGER}")
    try:  # bounded as the package reads it: depth, size, and numbers past Python's digit limit
        data = ledger_io.parse(path, git(root, "show", f"{ref}:{LEDGER}", strict=f"{path}"))
        return ledger_io.validate(path, ledger_io.migrate(path, data))
    except ledger_io.LedgerError as err:
        raise ReleaseError(str(err)) from None


MAX_PUBLISHED_BYTES = 16 * 1024 * 1024  # a PyPI JSON answer for this project: a few kB per release


def published_versions(path: Path | None) -> list[Version]:
    """The versions a saved PyPI JSON answer (``https://pypi.org/pypi/NAME/json``) lists; none without
    ``--published``. A file that is missing, too large, not JSON or not such an answer (an object with a
    ``releases`` object keyed by versions) is one sentence (``ReleaseError``)."""
    if path is None:
        return []
    try:
        if not path.is_file():
            raise ReleaseError(f"--published {path}: no such file (save PyPI's JSON answer there first).")
        if path.stat().st_size > MAX_PUBLISHED_BYTES:
            raise ReleaseError(f"--published {path}: larger than {MAX_PUBLISHED_BYTES} bytes.")
        data = ledger_io.parse(path, path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ledger_io.LedgerError) as err:
        why = str(err).replace(f"the ledger {path} ", "it ") if isinstance(err, ledger_io.LedgerError) else err
        raise ReleaseError(f"--published {path} is not PyPI's JSON answer: {why}") from None
    releases = data.get("releases") if isinstance(data, dict) else None
    if not isinstance(releases, dict):
        raise ReleaseError(f"--published {path} is not PyPI's JSON answer: it has no 'releases' object.")
    versions = []
    for key in releases:
        try:
            versions.append(parse_version(key))
        except InvalidVersion:
            raise ReleaseError(f"--published {path} lists {key[:40]!r}, which is not a version.") from None
    return versions


def plan_for(root: Path, commit: str, published: Path | None) -> Plan:
    """``decide`` for a commit of the checkout at ``root``: its tags, its code version, its day, its ledger."""

    pyproject = git(root, "show", f"{commit}:{PYPROJECT}", strict=f"{PYPROJECT} at {commit}")
    code, day = code_version(pyproject), commit_day(root, commit)

    def tags(*where: str) -> list[Version]:
        """The release tags: versions of the scheme of this code version or an earlier one. A tag above it
        (``v1``, ``v2026.12.03``, pushed by anyone who can push a tag) would outrank every release."""
        return [v for v in tag_versions(git(root, "tag", *where, "--list", f"{TAG_PREFIX}*").split()) if counts(v)]

    def counts(version: Version) -> bool:
        return of_scheme(version) and Version(version.base_version) <= code

    listed = tag_versions(git(root, "tag", "--list", f"{TAG_PREFIX}*").split())
    every = [v for v in listed if counts(v)]
    existing, tagged, merged = (
        [*every, *(v for v in published_versions(published) if of_scheme(v))],
        tag_versions(git(root, "tag", "--points-at", commit, "--list", f"{TAG_PREFIX}*").split()),
        tags("--merged", commit),
    )
    previous = previous_release(next_version(code, day, existing, [v for v in tagged if of_code(v, code)]), merged)
    changed = previous is not None and ledger_at(root, f"{TAG_PREFIX}{previous}") != ledger_at(root, commit)
    plan = decide(code, day, existing, tagged, merged, changed, every)  # says what it ignored at the commit
    elsewhere = sorted({f"{TAG_PREFIX}{v}" for v in listed if not counts(v) and v not in tagged})
    return _ignoring(plan, "the repository's", elsewhere, f"above code-version {code}, or not of the scheme")


def _version(text: str) -> Version:
    """A PEP 440 version from the command line, or a usage error in one sentence."""
    try:
        return parse_version(text)
    except InvalidVersion:
        raise argparse.ArgumentTypeError(f"not a PEP 440 version: {text[:60]!r}") from None


def build_parser() -> argparse.ArgumentParser:
    """What the release workflow runs: ``plan``, then ``notes`` for the planned version."""
    parser = argparse.ArgumentParser(prog="python -m tools.release", description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the git checkout (default: this one)")
    sub = parser.add_subparsers(dest="command", required=True)
    cmd = sub.add_parser("plan", help="whether to release, and the version")
    cmd.add_argument("--commit", default="HEAD")
    cmd.add_argument(
        "--published", type=Path, metavar="PYPI_JSON", help="PyPI's JSON answer for the project: its versions count"
    )
    cmd = sub.add_parser("notes", help="the release notes (Markdown)")
    cmd.add_argument("--commit", default="HEAD")
    cmd.add_argument("--version", type=_version, required=True, help="the release's version (the plan's)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "plan":
            print("\n".join(plan_for(args.root, args.commit, args.published).lines()))
        else:
            print(notes_command(args.root, args.commit, args.version), end="")
    except ReleaseError as err:
        print(for_terminal(f"error: {err}"), file=sys.stderr)
        return 2
    return 0


def notes_command(root: Path, commit: str, version: Version) -> str:
    """The notes for ``version`` made of ``commit``: changes since the release before it on its history."""
    if not of_scheme(version):
        raise ReleaseError(f"--version {version} is not a version of the scheme (0.2.0, 0.2.0.postYYYYMMDDNN).")
    merged = tag_versions(git(root, "tag", "--merged", commit, "--list", f"{TAG_PREFIX}*").split())
    since = previous_release(version, [v for v in merged if of_scheme(v)])
    before = ledger_at(root, f"{TAG_PREFIX}{since}") if since else None
    return notes(before, ledger_at(root, commit), version, since)


if __name__ == "__main__":
    sys.exit(main())
