"""The ledger: one JSON file recording what is known about each catalogued bug per torch release.

Schema 2: ``bugs[id]`` holds ``fixed_in`` and ``regressions``; ``releases[version]`` holds when it
was checked, whether its wheel is yanked, what reading the wheel cost (``probe``) and, under
``bugs[id]``, the static and dynamic verdicts. A schema-1 ledger (the original bug only) is
migrated on read and written back only as schema 2.

The CLI and the tests read it to know what to expect from the installed torch; the
upstream tracker writes it. ``REPRO_LEDGER=/path`` points both at another file. Writes go
through ``update``: an exclusive lock, a temporary file and an atomic rename, so neither
a crash nor a concurrent run can corrupt the file or lose an entry. The file keeps its mode,
a symlinked ledger is written through to its target, and the temporary file of a writer that
was killed is removed by the next one.
"""

from __future__ import annotations

import fcntl
import glob
import json
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

DEFAULT_PATH = Path(__file__).with_name("ledger.json")
SCHEMA = 2
OUTCOMES = ("present", "fixed", "different", "cannot-test")
ORIGINAL = "full-backward-hook-flag"  # the one bug a schema-1 ledger knows
MAX_BYTES = 16 * 1024 * 1024  # the committed ledger is ~60 KB; a device file or a runaway one is refused
TMP_PATTERN = ".????????.tmp"  # what tempfile.mkstemp(prefix=name + ".", suffix=".tmp") creates
PROBE_KEYS = ("wheel", "wheel_size", "bytes_fetched", "requests")  # what reading a wheel cost, per release


class LedgerError(Exception):
    """The ledger cannot be read or is malformed (one sentence; CLI exit code 2)."""


@dataclass(frozen=True)
class Expectation:
    """What the ledger says the installed torch should show, and why."""

    outcome: str  # "present", "fixed" or "cannot-test"
    reason: str


def ledger_path() -> Path:
    return Path(os.environ.get("REPRO_LEDGER") or DEFAULT_PATH)


def new_ledger() -> dict[str, Any]:
    return {"schema": SCHEMA, "bugs": {}, "releases": {}}


def load(path: Path) -> dict[str, Any]:
    """Read, validate and (from schema 1) migrate the ledger at ``path``: always schema 2 in memory."""
    try:
        if not path.is_file():
            raise LedgerError(f"the ledger {path} does not exist." if not path.exists()
                              else f"the ledger {path} is not a regular file.")
        if path.stat().st_size > MAX_BYTES:
            raise LedgerError(f"the ledger {path} is larger than {MAX_BYTES} bytes.")
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as err:
        raise LedgerError(f"the ledger {path} cannot be read: {err}.") from None
    except json.JSONDecodeError as err:
        raise LedgerError(f"the ledger {path} is not valid JSON ({err}).") from None
    except RecursionError:
        raise LedgerError(f"the ledger {path} is nested too deeply to be a ledger.") from None
    return validate(path, migrate(path, data))


def migrate(path: Path, data: Any) -> dict[str, Any]:
    """Schema 1 (one bug: top-level ``fixed_in``, ``releases[v].static/dynamic``) to schema 2 (per bug)."""
    if not isinstance(data, dict):
        raise LedgerError(f"the ledger {path} is not a JSON object.")
    schema = data.get("schema")
    if schema is None:
        raise LedgerError(f"the ledger {path} has no schema number.")
    if schema == SCHEMA:
        return data
    if schema != 1:
        raise LedgerError(f"the ledger {path} has schema {schema!r}; this version reads 1 and 2.")
    releases = data.get("releases")
    if not isinstance(releases, dict) or not all(isinstance(e, dict) for e in releases.values()):
        raise LedgerError(f"the ledger {path} has no 'releases' object of release objects.")
    migrated = {**{k: v for k, v in data.items() if k not in ("fixed_in", "regressions")}, "schema": SCHEMA,
                "bugs": {ORIGINAL: {"fixed_in": data.get("fixed_in"), "regressions": data.get("regressions", [])}},
                "releases": {version: _migrate_release(entry) for version, entry in releases.items()}}
    return migrated


def _migrate_release(entry: dict[str, Any]) -> dict[str, Any]:
    static = entry.get("static")
    release = {k: v for k, v in entry.items() if k not in ("static", "dynamic")}
    flag = {}
    if isinstance(static, dict):
        release["probe"] = {k: static[k] for k in PROBE_KEYS if k in static}
        flag["static"] = {k: v for k, v in static.items() if k not in PROBE_KEYS}
    if entry.get("dynamic"):
        flag["dynamic"] = entry["dynamic"]
    release["bugs"] = {ORIGINAL: flag} if flag else {}
    return release


def validate(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    """Every part the CLI, the tests and the tracker read has the type they read it as."""
    def bad(what: str) -> LedgerError:
        return LedgerError(f"the ledger {path} has {what}.")

    if not isinstance(data.get("releases"), dict):
        raise bad("no 'releases' object")
    if not isinstance(data.get("bugs"), dict) or not all(isinstance(b, dict) for b in data["bugs"].values()):
        raise bad("no 'bugs' object of bug objects")
    for bug_id, bug in data["bugs"].items():
        _version_or_none(bug.get("fixed_in"), bad(f"an invalid fixed_in {bug.get('fixed_in')!r} for {bug_id}"))
        if not isinstance(bug.get("regressions", []), list):
            raise bad(f"regressions for {bug_id} that are not a list")
    for version, entry in data["releases"].items():
        _version_or_none(version, bad(f"a release key {version!r} that is not a version"))
        if not isinstance(entry, dict) or not isinstance(entry.get("bugs", {}), dict):
            raise bad(f"a release {version} that is not an object with a 'bugs' object")
        for bug_id, verdicts in entry.get("bugs", {}).items():
            if not isinstance(verdicts, dict) or not all(
                    isinstance(verdicts.get(kind) or {}, dict) for kind in ("static", "dynamic")):
                raise bad(f"verdicts for {bug_id} in {version} that are not objects")
    if not isinstance(data.get("upstream_issues", {}), dict):
        raise bad("'upstream_issues' that is not an object")
    return data


def _version_or_none(value: Any, problem: LedgerError) -> None:
    if value is None:
        return
    try:
        Version(value) if isinstance(value, str) else None
    except InvalidVersion:
        raise problem from None
    if not isinstance(value, str):
        raise problem


def release_key(version: str | Version) -> str:
    """The ledger's key for a torch version: one per public release, with three release numbers, as an
    installed torch reports it ('2.13', '2.13.0+cpu', '2.13.0.0' -> '2.13.0'); the CLI and the tracker
    both key by it."""
    public = Version(Version(str(version)).public)
    numbers = list(public.release)
    while len(numbers) > 3 and numbers[-1] == 0:
        numbers.pop()
    numbers += [0] * (3 - len(numbers))
    epoch = f"{public.epoch}!" if public.epoch else ""
    rest = str(public)[len(epoch + ".".join(map(str, public.release))):]  # pre-, post- and dev-release parts
    return epoch + ".".join(map(str, numbers)) + rest


def verdicts_of(entry: dict[str, Any], bug_id: str) -> dict[str, Any]:
    """One release entry's verdicts for one bug (``static``, ``dynamic``, ...); empty where it has none."""
    return (entry.get("bugs") or {}).get(bug_id) or {}


def bug_history(ledger: dict[str, Any], bug_id: str) -> tuple[str | None, dict[str, dict[str, Any]]]:
    """(fixed_in, release -> {"static", "dynamic"}) for one bug."""
    releases = {version: verdicts_of(entry, bug_id) for version, entry in ledger["releases"].items()}
    return (ledger["bugs"].get(bug_id) or {}).get("fixed_in"), releases


def expectation_for(ledger: dict[str, Any], torch_version: str, bug_id: str = ORIGINAL) -> Expectation:
    """A confirmed result for this very release wins; otherwise the bug is expected
    present unless its ``fixed_in`` is at or below the installed version."""
    key = release_key(torch_version)
    fixed_in, releases = bug_history(ledger, bug_id)
    dynamic = (releases.get(key) or {}).get("dynamic") or {}
    if dynamic.get("verdict") in ("present", "fixed", "cannot-test"):
        return Expectation(dynamic["verdict"], f"the ledger's confirmed result for {key}")
    if fixed_in is None:
        return Expectation("present", "the ledger records no fixed release (fixed_in is null)")
    if Version(fixed_in) <= Version(torch_version):
        return Expectation("fixed", f"the ledger says fixed in {fixed_in}")
    return Expectation("present", f"the ledger says fixed only in {fixed_in}")


def check_writable(path: Path) -> None:
    """Refuse, before any work, a ledger whose writes would fail: its directory missing or read-only
    (the lock and the temporary file are created there), or the file itself read-only."""
    target = path.resolve()
    if not target.parent.is_dir():
        raise LedgerError(f"the ledger {path} cannot be written: its directory {target.parent} does not exist.")
    if not os.access(target.parent, os.W_OK | os.X_OK):
        raise LedgerError(f"the ledger {path} cannot be written: its directory {target.parent} is read-only.")
    if target.exists() and not os.access(target, os.W_OK):
        raise LedgerError(f"the ledger {path} cannot be written: the file is read-only.")


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock beside ``path``; whoever holds it is the only writer, so a temporary file
    left there is a killed writer's: removed."""
    lock = path.with_name(path.name + ".lock")
    with open(lock, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            for stale in path.parent.glob(glob.escape(path.name) + TMP_PATTERN):
                stale.unlink(missing_ok=True)
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _new_file_mode() -> int:
    """The mode ``open`` gives a new file here (0666 less the umask), not ``mkstemp``'s 0600."""
    umask = os.umask(0o077)  # reading the umask means setting it: briefly a stricter one, never a looser
    os.umask(umask)
    return 0o666 & ~umask


def write_atomic(path: Path, data: dict[str, Any]) -> None:
    """Replace ``path`` with ``data`` in one rename, keeping the file's mode (call with the symlink
    resolved: the rename replaces what it names)."""
    mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else _new_file_mode()
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            os.fchmod(out.fileno(), mode)
            json.dump(data, out, indent=2, sort_keys=True)
            out.write("\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def update(path: Path, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Apply ``change`` to the freshest ledger on disk, under the lock, atomically. A symlinked
    ledger is written through: its target is locked and replaced, the link stays."""
    target = path.resolve()
    with _locked(target):
        data = load(path) if target.exists() else new_ledger()
        change(data)
        write_atomic(target, data)
    return data
