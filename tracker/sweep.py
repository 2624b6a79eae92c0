"""One sweep: pick releases, probe each (static, then dynamic if asked), record each in the ledger.

Every release's result is written to the ledger as soon as it is known (locked, atomic),
so an error later in the sweep loses nothing already learned.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from packaging.version import Version

from repro import ledger as ledger_io
from tracker.confirm import Installer, ReportError, confirm
from tracker.remote import FetchError, Traffic, make_session
from tracker.index import Release
from tracker.probe import choose_wheel, fetch_sources, judge

STATUS_STATIC = ("changed", "removed")
STATUS_DYNAMIC = ("fixed", "different")


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
    timeout: float = 900.0


@dataclass
class Outcome:
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def select(releases: list[Release], known: dict[str, Any], options: Options) -> list[Release]:
    """Releases to check: no pre-releases unless asked, from --since, unseen unless --recheck."""
    chosen = []
    for release in releases:
        if (release.version.is_prerelease or release.version.is_devrelease) and not options.pre:
            continue
        if options.since and release.version < options.since:
            continue
        entry = known.get(str(release.version))
        if entry and not entry.get("error") and not options.recheck:
            continue
        chosen.append(release)
    return chosen


def static_entry(release: Release, full_download: bool, session_for: Callable) -> dict[str, Any]:
    """The ledger entry for one release from its wheel's sources, with what it cost."""
    if release.yanked:
        return {"yanked": True, "static": None, "checked_at": now()}
    wheel = choose_wheel(release.wheels)
    if wheel is None:
        static = {"verdict": "unknown", "evidence": ["the release has no wheel"], "bytes_fetched": 0,
                  "wheel_size": None, "requests": 0}
        return {"yanked": False, "static": static, "checked_at": now()}
    traffic = Traffic()
    error = None
    try:
        fetched = fetch_sources(session_for(), wheel, traffic, full_download)
        verdict = judge(fetched.sources) if fetched.problem is None else None
        verdict_name = verdict.verdict if verdict else "unknown"
        evidence = verdict.evidence if verdict else [fetched.problem]
        size = fetched.wheel_size
    except Exception as err:  # one release's failure must not end the sweep: record it, retry next run
        message = str(err) if isinstance(err, FetchError) else f"{type(err).__name__}: {err}"
        verdict_name, evidence, size, error = "unknown", [message], wheel.size, message
    static = {"verdict": verdict_name, "evidence": evidence, "bytes_fetched": traffic.bytes,
              "wheel_size": size, "requests": traffic.requests, "wheel": wheel.filename}
    entry = {"yanked": False, "static": static, "checked_at": now()}
    if error:
        entry["error"] = error
    return entry


def recompute(data: dict[str, Any]) -> None:
    """``fixed_in``: the lowest release confirmed fixed; later confirmed-present ones regressed."""
    confirmed = {
        Version(v): e["dynamic"]["verdict"] for v, e in data["releases"].items()
        if (e.get("dynamic") or {}).get("verdict")
    }
    fixed = sorted(v for v, verdict in confirmed.items() if verdict == "fixed")
    data["fixed_in"] = str(fixed[0]) if fixed else None
    data["regressions"] = [str(v) for v in sorted(confirmed) if fixed and v > fixed[0] and confirmed[v] == "present"]


def record(path: Path, version: str, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    def apply(data: dict[str, Any]) -> None:
        change(data["releases"].setdefault(version, {}))
        recompute(data)

    return ledger_io.update(path, apply)


def _replace_static(entry: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    """Overwrite the static part of a ledger entry, keeping an earlier dynamic verdict."""

    def change(existing: dict[str, Any]) -> None:
        existing.pop("error", None)
        existing.update(entry)

    return change


def run(releases: list[Release], options: Options, progress: Callable[[str], None]) -> Outcome:
    outcome = Outcome()
    local = threading.local()

    def session_for():
        if not hasattr(local, "session"):
            local.session = make_session()
        return local.session

    def probe(release: Release) -> tuple[str, dict[str, Any]]:
        return str(release.version), static_entry(release, options.full_download, session_for)

    with ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool:
        for done, (version, entry) in enumerate(pool.map(probe, releases), start=1):
            record(options.ledger, version, _replace_static(entry))
            outcome.entries[version] = entry
            if entry.get("error"):
                outcome.errors.append(f"{version}: {entry['error']}")
            static = entry["static"] or {"verdict": "yanked", "bytes_fetched": 0, "requests": 0}
            progress(f"[{done}/{len(releases)}] {version}: {static['verdict']} "
                     f"({static['bytes_fetched']} bytes, {static['requests']} requests)")
    for version, entry in outcome.entries.items():
        verdict = (entry["static"] or {}).get("verdict")
        if options.install or (options.confirm and verdict not in (None, "present")):
            confirm_and_record(version, options, outcome, progress)
    return outcome


def confirm_and_record(version: str, options: Options, outcome: Outcome, progress: Callable[[str], None]) -> None:
    """Record the reproducer's outcome; a report that is not one is an error of that release, retried next run."""
    progress(f"confirming {version} in a throwaway environment...")
    try:
        result = confirm(version, options.installer, options.timeout)
    except ReportError as err:
        record(options.ledger, version, lambda e: e.update(error=str(err)))
        outcome.entries.setdefault(version, {"static": None})
        outcome.errors.append(f"{version}: {err}")
        progress(f"{version}: error: {err}")
        return
    dynamic = {"verdict": result.verdict, "detail": result.detail, "checked_at": now()}
    record(options.ledger, version, lambda e: e.update(dynamic=dynamic))
    outcome.entries.setdefault(version, {"static": None}).update(dynamic=dynamic)
    progress(f"{version}: {result.verdict}: {result.detail}")


def changes(before: dict[str, Any], after: dict[str, Any], outcome: Outcome) -> list[str]:
    """What in this run means 'time to flip the tests'."""
    found = []
    if before.get("fixed_in") != after.get("fixed_in"):
        found.append(f"fixed_in: {before.get('fixed_in')} -> {after.get('fixed_in')}")
    for version in set(after.get("regressions", [])) - set(before.get("regressions", [])):
        found.append(f"{version}: regression (present again after a confirmed fix)")
    for version, entry in outcome.entries.items():
        static, dynamic = entry.get("static") or {}, entry.get("dynamic") or {}
        if static.get("verdict") in STATUS_STATIC:
            found.append(f"{version}: static verdict {static['verdict']}")
        if dynamic.get("verdict") in STATUS_DYNAMIC:
            found.append(f"{version}: confirmed {dynamic['verdict']}")
    return found
