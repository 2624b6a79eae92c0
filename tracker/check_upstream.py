"""Check torch releases for each catalogued ScriptModule bug and update the ledger.

    python -m tracker.check_upstream [--since 1.8] [--pre] [--recheck] [--install | --confirm]
    python -m tracker.check_upstream --index-url https://download.pytorch.org/whl/nightly/cpu --pre
    python -m tracker.check_upstream --versions 2.7.1,2.8.0 [--install-extra-index-url URL] [--use-pip-config]
    python -m tracker.check_upstream --ledger PATH [--init] [--dry-run]

The ledger is ``--ledger PATH``, else ``REPRO_LEDGER``, else the checkout's ``repro/ledger.json``; a
missing one is refused unless ``--init``, and one inside an installed package is never written.
Exit codes: 0 nothing changed; 3 the bug's status changed (fixed, changed, removed,
regressed: time to flip the tests), even if other releases failed: their errors are listed
too, so a failing release never hides a change; 1 errors and no change (every result obtained
before them is saved, failed releases are retried next run); 2 usage (bad options or URLs, a ledger
that cannot be read or written), found before any request, or stdout that cannot take the report (a full
disk: the ledger holds the results all the same); 130 interrupted (Ctrl-C), the ledger
holding what was recorded before it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import signal
import site
import sys
import sysconfig
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from functools import partial
from pathlib import Path

if __package__ in (None, ""):  # run as `python tracker/check_upstream.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from packaging.version import InvalidVersion, Version

from repro import atomic
from repro import ledger as ledger_io
from repro.output import answered, emit, leave, parsed
from repro.sanitise import for_terminal, one_line
from repro.versions import parse as parse_version
from tracker import history, sweep
from tracker.confirm import Exploring, Installer
from tracker.index import INDEX_KINDS, discover
from tracker.remote import FetchError, Traffic, check_url, make_session
from tracker.summary import markdown, text, wrap
from tracker.upstream_issue import DEFAULT_API, issue_state, parse_ref

DEFAULT_INDEX = "https://pypi.org"
EXIT_OK, EXIT_ERRORS, EXIT_USAGE, EXIT_CHANGED = 0, 1, 2, 3


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="check_upstream",
        description=__doc__.splitlines()[0],
        epilog="Exit codes: 0 unchanged, 3 status changed (errors or not), "
        "1 errors and no change, 2 usage or an unusable ledger, 130 Ctrl-C.",
    )
    parser.add_argument(
        "--index-url", default=DEFAULT_INDEX, help="the package index, read as --index-kind says (default: %(default)s)"
    )
    parser.add_argument(
        "--index-kind",
        choices=INDEX_KINDS,
        default="auto",
        help="json: <URL>/pypi/torch/json; simple: a page at <URL>/torch/; auto: simple for a URL "
        "ending in /simple, else json, falling back to simple where there is none "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--install-index-url",
        help="the only index --install/--confirm/--versions get torch from (default: <index-url>/simple/)",
    )
    parser.add_argument(
        "--install-extra-index-url",
        metavar="URL",
        help="a second index for torch's dependencies only (pip's --extra-index-url)",
    )
    parser.add_argument(
        "--use-pip-config",
        action="store_true",
        help="install with pip honouring its configuration files and PIP_* variables "
        "(find-links included); by default they are ignored",
    )
    parser.add_argument("--since", type=_version, help="sweep every release from this version on")
    parser.add_argument("--pre", action="store_true", help="include pre-releases, dev and nightly builds")
    parser.add_argument("--recheck", action="store_true", help="check releases the ledger has already seen")
    confirm = parser.add_mutually_exclusive_group()
    confirm.add_argument("--install", action="store_true", help="run the reproducer on every release probed")
    confirm.add_argument("--confirm", action="store_true", help="run it where the static verdict is not present")
    parser.add_argument(
        "--versions",
        type=_versions,
        help="comma-separated releases: install each and run the reproducer "
        "(no --since, --pre or --recheck: the list is the selection)",
    )
    parser.add_argument(
        "--full-download", action="store_true", help="download whole wheels where ranges are unsupported"
    )
    parser.add_argument("--jobs", type=_positive, default=4, help="concurrent probes (default: %(default)s)")
    parser.add_argument(
        "--timeout", type=_seconds, default=900, help="seconds per release for dynamic runs (default: %(default)s)"
    )
    parser.add_argument(
        "--explore",
        type=_seconds,
        metavar="SECONDS",
        help="with --install, --confirm or --versions: also run the explorer on each release confirmed, "
        "SECONDS of open search and SECONDS per workaround on generated models (recorded per release)",
    )
    parser.add_argument(
        "--explore-database",
        type=Path,
        metavar="DIR",
        help="with --explore: the folder of departing cases replayed first and kept (python -m repro "
        "--explore --database; the scheduled workflow keeps it as an artifact)",
    )
    parser.add_argument(
        "--bug",
        action="append",
        default=[],
        metavar="ID",
        help="check only this catalogued bug (repeatable; default: every one)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--ledger",
        type=Path,
        metavar="PATH",
        help="the ledger to read and write (default: $REPRO_LEDGER, else the checkout's repro/ledger.json)",
    )
    parser.add_argument("--init", action="store_true", help="start a new ledger at that path if there is none")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="write neither the ledger nor a step summary (a copy is updated and thrown away); "
        "installs only with --install, --confirm or --versions",
    )
    parser.add_argument(
        "--upstream-issue",
        type=_issue_ref,
        metavar="OWNER/REPO#N",
        help="also record that GitHub issue's state (token from GITHUB_TOKEN if set)",
    )
    parser.add_argument("--github-api-url", default=DEFAULT_API, help="GitHub REST API root (default: %(default)s)")
    return parser


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = build_parser()
    args = parsed(parser, argv)
    from repro.catalogue import UnknownBug, get

    try:  # after parsing: argparse's "argument --bug: " would push the sentence past 100 columns
        args.bug = [get(bug_id).id for bug_id in args.bug]
    except UnknownBug as problem:
        parser.error(str(problem))
    ignored = [
        name
        for name, given in (
            ("--since", args.since is not None),
            ("--pre", args.pre),
            ("--recheck", args.recheck),
            ("--index-kind", args.index_kind != "auto"),
        )
        if given
    ]
    if args.versions and ignored:
        parser.error(f"--versions names the releases to install; {', '.join(ignored)} would be ignored")
    if args.explore and not (args.install or args.confirm or args.versions):
        parser.error("--explore runs where a release is installed: add --install, --confirm or --versions")
    if args.explore_database and not args.explore:
        parser.error("--explore-database is for --explore")
    if args.explore_database:
        args.explore_database = args.explore_database.resolve()  # the explorer runs in another folder
    args.install_index_url = args.install_index_url or args.index_url.rstrip("/").removesuffix("/simple") + "/simple/"
    return args


def _version(text: str) -> Version:
    try:
        return parse_version(text)
    except InvalidVersion:
        raise argparse.ArgumentTypeError(f"not a version: {text!r}") from None


def _positive(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"not a positive whole number: {text!r}")
    return number


def _seconds(text: str) -> float:
    try:
        number = float(text)
    except ValueError:
        number = 0.0
    if not (math.isfinite(number) and number > 0):  # nan and inf would fail deep in subprocess
        raise argparse.ArgumentTypeError(f"not a positive number of seconds: {text!r}")
    return number


def _issue_ref(text: str) -> str:
    try:
        parse_ref(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text


def _versions(text: str) -> list[Version]:
    versions = [_version(part.strip()) for part in text.split(",") if part.strip()]
    if not versions:  # an empty list would silently mean "sweep everything"
        raise argparse.ArgumentTypeError(f"no version given: {text!r}")
    return list(dict.fromkeys(versions))  # "2.13" and "2.13.0" are one release: installed once


def main(argv: list[str] | None = None) -> int:
    """Ctrl-C is one line and exit 130; each release's record was written in one rename, so the ledger
    holds every one recorded before it, and no install or reproducer run outlives the tracker."""
    signal.signal(signal.SIGINT, signal.default_int_handler)  # tracker/__init__.py's, while loading, ends
    # a full stdout loses the report only: the ledger is written already (unless --dry-run)
    return answered(partial(_main, argv), "check_upstream", "interrupted; the ledger holds what was recorded before it")


def _main(argv: list[str] | None) -> int:
    args = parse_args(argv)
    path = args.ledger or ledger_io.ledger_path()
    try:
        for url in (args.index_url, args.github_api_url, args.install_index_url, args.install_extra_index_url):
            if url is not None:
                check_url(url)
        if not args.dry_run:
            refuse_installed(path)
            ledger_io.check_writable(path)  # now, not at the first write after minutes of probing
        if not path.exists() and not args.init:
            raise ledger_io.LedgerError(f"the ledger {path} does not exist (--init starts a new one there).")
        if args.init and not path.exists() and not args.dry_run:
            ledger_io.update(path, lambda data: None)  # started now: a run with nothing to check still leaves one
        before = ledger_io.load(path) if path.exists() else ledger_io.new_ledger()
    except (FetchError, ledger_io.LedgerError) as problem:
        print(for_terminal(f"check_upstream: error: {problem}"), file=sys.stderr)
        return EXIT_USAGE
    with _workspace(path, args.dry_run) as work:
        return check(args, work, before)


def installed_package_dirs() -> list[Path]:
    """Where this interpreter installs packages: a ledger there belongs to pip, not to the tracker."""
    dirs = {sysconfig.get_paths()[key] for key in ("purelib", "platlib")}
    dirs.update(site.getsitepackages())
    if site.ENABLE_USER_SITE and site.getusersitepackages():
        dirs.add(site.getusersitepackages())
    return [Path(d) for d in dirs]


def refuse_installed(path: Path) -> None:
    """Refuse a ledger inside an installed package (``site-packages``): pip owns that file, and an
    upgrade would silently undo what the tracker wrote."""
    target = path.resolve()
    inside = any(part in ("site-packages", "dist-packages") for part in target.parts[:-1]) or any(
        target.is_relative_to(d.resolve()) for d in installed_package_dirs()
    )
    if inside:
        raise ledger_io.LedgerError(f"the ledger {path} is in an installed package: give --ledger PATH, or --dry-run.")


@contextmanager
def _workspace(path: Path, dry_run: bool) -> Iterator[Path]:
    """The ledger this run writes: ``path`` itself, or for ``--dry-run`` a copy thrown away at the end."""
    if not dry_run:
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="check-upstream-dry-run-") as tmp:
        copy = Path(tmp) / "ledger.json"
        if path.exists():
            shutil.copyfile(path, copy)
        yield copy


def check(args: argparse.Namespace, path: Path, before: dict) -> int:
    """The run itself, over the ledger at ``path`` (the real one, or a dry run's copy)."""
    options = sweep.Options(
        ledger=path,
        pre=args.pre,
        since=args.since,
        recheck=args.recheck,
        install=args.install,
        confirm=args.confirm,
        full_download=args.full_download,
        installer=Installer(args.install_index_url, args.install_extra_index_url, args.use_pip_config),
        jobs=args.jobs,
        timeout=args.timeout,
        exploring=Exploring(args.explore, database=args.explore_database) if args.explore else None,
        bugs=tuple(args.bug),
    )

    def progress(line: str) -> None:
        print("\n".join(wrap(for_terminal(line))), file=sys.stderr, flush=True)

    if args.upstream_issue:
        state = issue_state(make_session(), args.github_api_url, args.upstream_issue, sweep.now())
        ledger_io.update(path, _record_issue(args.upstream_issue, state))
        why = state.get("state_reason") or state.get("error")
        progress(f"{args.upstream_issue}: {state['state']}" + (f" ({why})" if why else ""))

    outcome = sweep.Outcome()
    try:
        if args.versions:
            for version in args.versions:
                sweep.confirm_and_record(str(version), options, outcome, progress)
        else:
            try:
                releases = discover(make_session(), args.index_url, Traffic(), kind=args.index_kind)
            except FetchError as err:
                print(for_terminal(f"check_upstream: error: {err}"), file=sys.stderr)
                return EXIT_ERRORS
            chosen = sweep.select(releases, before["releases"], options, progress)
            progress(f"{len(releases)} releases listed, {len(chosen)} to check")
            outcome = sweep.run(chosen, options, progress)
    except ledger_io.LedgerError as problem:  # a write refused (too large, say): the ledger is as it was
        print(for_terminal(f"check_upstream: error: {problem}"), file=sys.stderr)
        return EXIT_USAGE

    after = ledger_io.load(path) if path.exists() else before
    found = history.changes(before, after, outcome.entries)
    emit(json.dumps(_as_json(outcome, after, found), indent=2) if args.json else text(outcome, after, found))
    summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_file and not args.dry_run:
        _append_summary(summary_file, lambda: markdown(outcome, after, found))
    if found:  # a change wins, so the workflow opens its pull request; the errors are listed in it
        return EXIT_CHANGED
    return EXIT_ERRORS if outcome.errors else EXIT_OK


def _append_summary(path: str, body: Callable[[], str]) -> None:
    """Append to the CI step summary in one write: one that cannot be made or written costs a warning,
    never the verdict's exit code."""
    try:
        atomic.append(path, body() + "\n")
    except (OSError, ValueError) as err:  # WriteError, or a summary that could not be made
        why = err.why if isinstance(err, atomic.WriteError) else str(err)
        print(one_line(f"check_upstream: warning: GITHUB_STEP_SUMMARY not written: {why}", 100), file=sys.stderr)


def _record_issue(ref: str, state: dict) -> Callable[[dict], None]:
    def change(data: dict) -> None:
        data.setdefault("upstream_issues", {})[ref] = state

    return change


def _as_json(outcome: sweep.Outcome, ledger: dict, found: list[history.Change]) -> dict:
    return {
        "releases": [
            {"version": v, "yanked": e.get("yanked", False), "probe": e.get("probe"), "bugs": e.get("bugs", {})}
            for v, e in outcome.entries.items()
        ],
        "bugs": ledger.get("bugs", {}),
        "status_changed": bool(found),
        "changes": [asdict(change) for change in found],  # bug_id, kind, release, before, after
        "errors": outcome.errors,
        "unmeasurable": outcome.unmeasurable,
        "not_installable": outcome.not_installable,
        "upstream_issues": ledger.get("upstream_issues", {}),
    }


if __name__ == "__main__":
    leave(main())
