"""One sweep: pick releases, probe each (static, then dynamic if asked), record each in the ledger.

One read of a wheel's three source files serves every catalogued bug's static signature; a
dynamic run (``python -m repro --json --slow``) gives a verdict per bug. Every release's result
is written to the ledger as soon as it is known (locked, atomic), so an error later in the
sweep loses nothing already learned.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from functools import partial
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import requests
from packaging.version import Version

from repro import ledger as ledger_io
from repro.catalogue import BUGS
from repro.source_checks import Reference
from tracker.confirm import Exploring, Installer, Measurement, ReportError, TimedOut, confirm
from tracker.history import recompute
from tracker.index import Installability, Release, installability, runner_tag
from tracker.probe import choose_wheel, fetch_sources, judge
from tracker.remote import FetchError, Traffic, make_session

ATTEMPTS = 3  # dynamic runs without a report, on separate runs, after which a release is unmeasurable here
DEFAULT_TIMEOUT = 900.0  # seconds per dynamic run; a run timed out under a shorter --timeout is not a try


@dataclass(frozen=True)
class Options:
    ledger: Path
    pre: bool = False
    since: Version | None = None
    recheck: bool = False
    install: bool = False
    confirm: bool = False
    installer: Installer = Installer("")
    full_download: bool = False
    jobs: int = 4
    timeout: float = DEFAULT_TIMEOUT
    bugs: tuple[str, ...] = ()  # --bug: the catalogued bugs to check (empty: every one)
    exploring: Exploring | None = None  # --explore: the explorer runs too, on each release confirmed


@dataclass
class Outcome:
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    unmeasurable: list[str] = field(default_factory=list)  # given up on this run: final, not an error
    not_installable: list[str] = field(default_factory=list)  # no wheel for this interpreter: final for its tag
    tried: set[str] = field(default_factory=set)  # ledger keys whose failed run counted as a try this run


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def nightly_base(version: Version) -> str | None:
    """The base version of a nightly (``2.16.0`` for ``2.16.0.dev20261201``); None for a release, a
    pre-release such as an rc, or a post-release, which the newest-nightly rule leaves alone."""
    return version.base_version if version.dev is not None and version.pre is None and version.post is None else None


def undated_nightly(version: Version) -> bool:
    """A nightly whose dev number is not a ``YYYYMMDD`` date (``2.16.0.dev202612011``): it would sort above
    every real nightly of its base version, so it is never chosen and never displaces one."""
    if nightly_base(version) is None:
        return False
    try:
        datetime.strptime(str(version.dev), "%Y%m%d")
    except ValueError:
        return True
    return len(str(version.dev)) != 8


def newest_nightlies(versions: Iterable[Version]) -> set[Version]:
    """The newest dated nightly of each base version: an index lists weeks of nightlies of one version, and
    only the newest says where that version stands."""
    newest: dict[str, Version] = {}
    for version in versions:
        base = nightly_base(version)
        if base is not None and not undated_nightly(version) and (base not in newest or version > newest[base]):
            newest[base] = version
    return set(newest.values())


def superseded_nightlies(keys: Iterable[str], recorded: str) -> list[str]:
    """The ledger keys that recording ``recorded`` supersedes: the older nightlies of its base version, so
    that the ledger keeps one nightly per base version (none when ``recorded`` is not a nightly)."""
    new = Version(recorded)
    base = nightly_base(new)
    if base is None or undated_nightly(new):
        return []
    return [key for key in keys if nightly_base(Version(key)) == base and Version(key) < new]


def select(
    releases: list[Release], known: dict[str, Any], options: Options, warn: Callable[[str], None] = lambda line: None
) -> list[Release]:
    """Releases to check: no pre-releases unless asked, from --since, unseen unless --recheck; of the
    nightlies, only the newest dated one of each base version, unless the ledger already holds a newer one
    (an undated one is skipped, with a warning)."""
    newest = newest_nightlies([*(release.version for release in releases), *map(Version, known)])
    chosen = []
    for release in releases:
        if (release.version.is_prerelease or release.version.is_devrelease) and not options.pre:
            continue
        if undated_nightly(release.version):
            warn(f"warning: skipped {release.version}: a nightly whose dev number is not a YYYYMMDD date")
            continue
        if nightly_base(release.version) is not None and release.version not in newest:
            continue
        if options.since and release.version < options.since:
            continue
        entry = known.get(str(release.version))
        redecide = (options.install or options.confirm) and _not_installable_elsewhere(entry)
        if entry and not entry.get("error") and not options.recheck and not redecide:
            continue
        chosen.append(release)
    return chosen


def _not_installable_elsewhere(entry: dict[str, Any] | None) -> bool:
    """The release was found not installable for another interpreter tag: decided again for this one."""
    found = (entry or {}).get("not_installable")
    return isinstance(found, dict) and found.get("tag") != runner_tag()


PROCESSES_FROM = 8  # releases in one sweep from which probing runs in processes: their startup then pays off
_local = threading.local()


def _probe(
    release: Release, references: dict[str, Reference | None] | None, *, full_download: bool, bug_ids: tuple[str, ...]
) -> tuple[str, dict[str, Any]]:
    """One release's static entry, with this thread's (or worker process's) own HTTP session."""
    return str(release.version), static_entry(release, full_download, _session, bug_ids, references)


def _session() -> requests.Session:
    if not hasattr(_local, "session"):
        _local.session = make_session()
    return _local.session


def reference_for(ledger: dict[str, Any], bug_id: str, version: str) -> Reference | None:
    """The latest release up to ``version`` confirmed present for the bug, with its recorded fingerprint:
    what ``present`` is measured against (a later release's code is no baseline for an earlier one)."""
    _, releases = ledger_io.bug_history(ledger, bug_id)
    confirmed = [
        (Version(v), e["static"]["fingerprint"])
        for v, e in releases.items()
        if Version(v) <= Version(version)
        and (e.get("dynamic") or {}).get("verdict") == "present"
        and (e.get("static") or {}).get("fingerprint")
    ]
    if not confirmed:
        return None
    latest, fingerprint = max(confirmed, key=lambda pair: pair[0])
    return str(latest), fingerprint


def static_entry(
    release: Release,
    full_download: bool,
    session_for: Callable,
    bug_ids: tuple[str, ...] = (),
    references: dict[str, Reference | None] | None = None,
) -> dict[str, Any]:
    """The ledger entry for one release: what reading its wheel cost (``probe``) and the static verdict
    of each bug (``bug_ids``, default every catalogued one) from the wheel's sources (``bugs[id].static``),
    measured against each bug's ``references`` (``reference_for``) where there is one."""
    chosen = bug_ids or tuple(BUGS)
    if release.yanked:
        return {"yanked": True, "bugs": {}, "checked_at": now()}
    wheel = choose_wheel(release.wheels)
    if wheel is None:
        return {
            "yanked": False,
            "checked_at": now(),
            "probe": {"bytes_fetched": 0, "wheel_size": None, "requests": 0},
            "bugs": _every_bug(chosen, "unknown", ["the release has no wheel"]),
        }
    traffic = Traffic()
    error = None
    size: int | None
    try:
        fetched = fetch_sources(session_for(), wheel, traffic, full_download)
        size = fetched.wheel_size
        if fetched.problem is None:
            bugs = {
                bug_id: {
                    "static": asdict(
                        judge(fetched.sources, partial(BUGS[bug_id].static, reference=(references or {}).get(bug_id)))
                    )
                }
                for bug_id in chosen
            }
        else:
            bugs = _every_bug(chosen, "unknown", [fetched.problem])
    except Exception as err:  # one release's failure must not end the sweep: record it, retry next run
        error = str(err) if isinstance(err, FetchError) else f"{type(err).__name__}: {err}"
        bugs, size = _every_bug(chosen, "unknown", [error]), wheel.size
    probe = {"wheel": wheel.filename, "wheel_size": size, "bytes_fetched": traffic.bytes, "requests": traffic.requests}
    entry = {"yanked": False, "checked_at": now(), "probe": probe, "bugs": bugs}
    if error:
        entry["error"] = error
    return entry


def _every_bug(bug_ids: tuple[str, ...], verdict: str, evidence: list[str]) -> dict[str, Any]:
    return {bug_id: {"static": {"verdict": verdict, "evidence": evidence}} for bug_id in bug_ids}


def record(path: Path, version: str, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Apply ``change`` to the ledger entry of ``version``; a nightly recorded without error replaces the
    older nightlies of its base version (one that failed keeps them until it is retried)."""

    def apply(data: dict[str, Any]) -> None:
        entry = data["releases"].setdefault(version, {"bugs": {}})
        change(entry)
        if not entry.get("error"):
            for key in superseded_nightlies(data["releases"], version):
                del data["releases"][key]
        recompute(data)

    return ledger_io.update(path, apply)


def _replace_static(entry: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    """Overwrite the static part of a ledger entry, keeping each bug's earlier dynamic verdict."""

    def change(existing: dict[str, Any]) -> None:
        existing.pop("error", None)
        existing.pop("probe", None)
        bugs = existing.setdefault("bugs", {})
        existing.update({k: v for k, v in entry.items() if k != "bugs"})
        for bug_id, verdicts in entry["bugs"].items():
            bugs.setdefault(bug_id, {}).update(verdicts)

    return change


def _record_dynamic(
    verdicts: dict[str, dict[str, Any]], measured: Measurement | None = None, checked_at: str = ""
) -> Callable[[dict[str, Any]], None]:
    """Each bug's new dynamic verdict, from a report; from ``measured``, the support column it measured
    (per device, for docs/support-table.md; another device's column stays), each bug's workaround
    proof, which ``--support-table`` reads, and where the explorer ran, its record and each workaround's
    verdict on generated models (one not tried this time loses an older one): the release's error and
    failed attempts end."""

    def change(existing: dict[str, Any]) -> None:
        for key in ("error", "failed_attempts", "unmeasurable", "not_installable"):
            existing.pop(key, None)
        if measured and measured.support:
            existing["support"] = {**(existing.get("support") or {}), **measured.support}
        if measured and measured.explored:
            explored = {**measured.explored, "checked_at": checked_at}
            existing["explore"] = {**(existing.get("explore") or {}), "cpu": explored}
        bugs = existing.setdefault("bugs", {})
        for bug_id, dynamic in verdicts.items():
            bugs.setdefault(bug_id, {})["dynamic"] = dynamic
        for bug_id in verdicts:  # the bugs this run was asked about (--bug), as for verdicts
            proof = measured.workarounds.get(bug_id) if measured else None
            if proof:
                bugs[bug_id]["workaround"] = proof
            if measured and measured.explored_workarounds is not None:
                tried = measured.explored_workarounds.get(bug_id)
                if tried:
                    bugs[bug_id]["explored"] = {**tried, "checked_at": checked_at}
                else:
                    bugs[bug_id].pop("explored", None)

    return change


def _record_failure(detail: str, checked_at: str) -> Callable[[dict[str, Any]], None]:
    """A run that produced no report: an error of the release (retried next run), its verdicts untouched;
    after ``ATTEMPTS`` such runs the release is ``unmeasurable`` here, with the reason, and no longer retried."""

    def change(existing: dict[str, Any]) -> None:
        attempts = existing.setdefault("failed_attempts", [])
        attempts.append({"checked_at": checked_at, "detail": detail})
        if len(attempts) >= ATTEMPTS:
            existing.pop("error", None)
            existing["unmeasurable"] = f"no report in {len(attempts)} attempts; the last: {detail}"
        else:
            existing["error"] = f"no report ({len(attempts)} of {ATTEMPTS} attempts): {detail}"

    return change


def _record_not_installable(found: Installability, checked_at: str) -> Callable[[dict[str, Any]], None]:
    """No wheel for the runner's interpreter: final for its tag (no error, no try), with the tags that
    do have wheels; the release's earlier failed attempts end."""

    def change(existing: dict[str, Any]) -> None:
        for key in ("error", "failed_attempts"):
            existing.pop(key, None)
        existing["not_installable"] = {"tag": found.tag, "wheel_tags": list(found.wheel_tags), "checked_at": checked_at}

    return change


def _record_run_error(detail: str) -> Callable[[dict[str, Any]], None]:
    """A failure of this run, not of the release (the index did not answer, a second local variant, a
    short ``--timeout``): an error, retried next run, that counts no attempt."""

    def change(existing: dict[str, Any]) -> None:
        existing["error"] = detail

    return change


def static_verdicts(entry: dict[str, Any]) -> dict[str, str | None]:
    """bug id -> static verdict of one ledger entry (empty for a yanked release)."""
    return {
        bug_id: (v.get("static") or {}).get("verdict")
        for bug_id, v in (entry.get("bugs") or {}).items()
        if v.get("static")
    }


@contextmanager
def _ctrl_c_held() -> Iterator[None]:
    """SIGINT blocked while worker processes start: a blocked signal stays blocked across their exec, so
    a Ctrl-C to the terminal's process group cannot raise ``KeyboardInterrupt`` (a traceback each) while
    a worker still imports; this process gets it once it is unblocked, and says the one line."""
    held = hasattr(signal, "pthread_sigmask") and threading.current_thread() is threading.main_thread()
    if held:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        if held:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _ended_by_ctrl_c() -> None:
    """A worker process's first step: Ctrl-C ends it with no traceback (the default action), the one
    held since it started included; the tracker, which gets it too, says the one line."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _stop(pool: Executor) -> None:
    """Wait for no probe: worker processes are killed mid-probe (``terminate_workers`` from Python
    3.14; their process table before), and the pool, broken, fails what was left; threads end with the
    tracker's process (``repro.output.leave`` ends it with ``os._exit`` on Ctrl-C)."""
    if not isinstance(pool, ProcessPoolExecutor):
        pool.shutdown(wait=False, cancel_futures=True)
        return
    terminate = getattr(pool, "terminate_workers", None)
    if terminate is not None:
        terminate()
        return
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        process.kill()
    pool.shutdown()  # quick: the manager finds its workers gone and fails the probes left (none cancelled:
    # Python 3.11's manager then raises InvalidStateError in its thread, so no pool.map, which cancels)


def run(releases: list[Release], options: Options, progress: Callable[[str], None]) -> Outcome:
    """Probe each release and record it as it comes: in threads, or for a history sweep (many releases,
    CPU-bound in parsing each central directory and each file) in processes, which use every CPU."""
    outcome = Outcome()
    known = ledger_io.load(options.ledger) if options.ledger.exists() else None
    references = [
        {bug_id: reference_for(known, bug_id, str(release.version)) for bug_id in options.bugs or BUGS}
        if known
        else None
        for release in releases
    ]
    probe = partial(_probe, full_download=options.full_download, bug_ids=options.bugs)
    if len(releases) >= PROCESSES_FROM:
        pool: Executor = ProcessPoolExecutor(
            max_workers=max(1, options.jobs), mp_context=get_context("spawn"), initializer=_ended_by_ctrl_c
        )
    else:
        pool = ThreadPoolExecutor(max_workers=max(1, options.jobs))
    try:
        with _ctrl_c_held():  # the workers start here, and inherit the held Ctrl-C
            probes = [pool.submit(probe, release, reference) for release, reference in zip(releases, references)]
        for done, (version, entry) in enumerate((future.result() for future in probes), start=1):
            record(options.ledger, version, _replace_static(entry))
            outcome.entries[version] = entry
            if entry.get("error"):
                outcome.errors.append(f"{version}: {entry['error']}")
            cost = entry.get("probe") or {"bytes_fetched": 0, "requests": 0}
            verdicts = ", ".join(f"{b}: {v}" for b, v in static_verdicts(entry).items()) or "yanked"
            progress(
                f"[{done}/{len(releases)}] {version}: {verdicts} "
                f"({cost['bytes_fetched']} bytes, {cost['requests']} requests)"
            )
    except BaseException:  # Ctrl-C above all: no probe outlives the tracker, nor waits for one
        _stop(pool)
        raise
    pool.shutdown()
    for version, entry in outcome.entries.items():
        applicable = set(static_verdicts(entry).values()) - {"not-applicable"}  # never confirmed: nothing to run
        if applicable and (options.install or (options.confirm and applicable - {"present"})):
            confirm_and_record(version, options, outcome, progress)
    return outcome


def confirm_and_record(version: str, options: Options, outcome: Outcome, progress: Callable[[str], None]) -> None:
    """Install ``torch==version``, record the reproducer's verdict per bug under the release's ledger key.
    A release with no wheel for this interpreter is recorded as not installable, before any install. A
    run that gives no report is an error of that release (``_record_failure``), never a verdict, and
    counts as a try only when the index still lists a wheel for this interpreter, once per release per
    run, and not when a ``--timeout`` shorter than the default cut it."""
    key = ledger_io.release_key(version)
    entry = outcome.entries.setdefault(key, {"bugs": {}})
    if not _installable(version, key, options, outcome, entry, progress):
        return
    progress(f"confirming {version} in a throwaway environment...")
    try:
        measured = confirm(version, options.installer, options.timeout, options.exploring)
    except ReportError as err:
        if not _installable(version, key, options, outcome, entry, progress):  # asked again before it counts
            return
        if key in outcome.tried:
            _run_error(key, f"{err} (a second local variant of {key} in one run: not another try)", options, outcome)
        elif isinstance(err, TimedOut) and options.timeout < DEFAULT_TIMEOUT:
            _run_error(key, f"{err}, under --timeout {options.timeout:g} (not a try)", options, outcome)
        else:
            outcome.tried.add(key)
            _failed_try(key, str(err), options, outcome, entry, progress)
        return
    checked_at = now()
    results = {bug_id: r for bug_id, r in measured.verdicts.items() if not options.bugs or bug_id in options.bugs}
    verdicts = {
        bug_id: {"verdict": r.verdict, "detail": r.detail, "checked_at": checked_at} for bug_id, r in results.items()
    }
    release = record(options.ledger, key, _record_dynamic(verdicts, measured, checked_at))["releases"][key]
    if measured.explore_error:  # the verdicts stand; the explorer's record waits for the next run
        outcome.errors.append(f"{key}: {measured.explore_error}")
    for bug_id in verdicts:
        entry.setdefault("bugs", {}).setdefault(bug_id, {})["dynamic"] = release["bugs"][bug_id]["dynamic"]
    progress(f"{key}: " + ", ".join(f"{b}: {v['verdict']}" for b, v in verdicts.items()))


def _installable(
    version: str, key: str, options: Options, outcome: Outcome, entry: dict[str, Any], progress: Callable[[str], None]
) -> bool:
    """Whether the install index has a wheel of ``version`` for this interpreter; recorded when it has
    none (final for this tag), an error of the run when the index does not answer. With
    ``--use-pip-config`` pip may take torch from elsewhere (find-links): pip alone decides."""
    if options.installer.use_pip_config:
        return True
    try:
        found = installability(make_session(), options.installer.index_url, version, Traffic())
    except FetchError as err:
        _run_error(key, f"the install index did not answer, so nothing was tried: {err}", options, outcome)
        return False
    if found.installable:
        return True
    release = record(options.ledger, key, _record_not_installable(found, now()))["releases"][key]
    entry["not_installable"] = release["not_installable"]
    having = ", ".join(found.wheel_tags) or "none"
    outcome.not_installable.append(f"{key}: no wheel for {found.tag} (wheels for: {having})")
    progress(f"{key}: not installable here: no wheel for {found.tag} (wheels for: {having})")
    return False


def _run_error(key: str, detail: str, options: Options, outcome: Outcome) -> None:
    record(options.ledger, key, _record_run_error(detail))
    outcome.errors.append(f"{key}: {detail}")


def _failed_try(
    key: str, detail: str, options: Options, outcome: Outcome, entry: dict[str, Any], progress: Callable[[str], None]
) -> None:
    release = record(options.ledger, key, _record_failure(detail, now()))["releases"][key]
    if "unmeasurable" in release:
        entry["unmeasurable"] = release["unmeasurable"]
        outcome.unmeasurable.append(f"{key}: {release['unmeasurable']}")
        progress(f"{key}: unmeasurable here: {release['unmeasurable']}")
    else:
        outcome.errors.append(f"{key}: {release['error']}")
        progress(f"{key}: error: {release['error']}")
