"""The ledger: one JSON file recording what is known about the bug per torch release.

The CLI and the tests read it to know what to expect from the installed torch; the
upstream tracker writes it. ``REPRO_LEDGER=/path`` points both at another file. Writes go
through ``update``: an exclusive lock, a temporary file and an atomic rename, so neither
a crash nor a concurrent run can corrupt the file or lose an entry.
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

DEFAULT_PATH = Path(__file__).with_name("ledger.json")
SCHEMA = 1
OUTCOMES = ("present", "fixed", "different", "cannot-test")
ORIGINAL = "full-backward-hook-flag"  # the one bug a schema-1 ledger knows


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
    return {"schema": SCHEMA, "fixed_in": None, "releases": {}}


def load(path: Path) -> dict[str, Any]:
    """Read and validate the ledger at ``path``."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LedgerError(f"the ledger {path} does not exist.") from None
    except (OSError, UnicodeDecodeError) as err:
        raise LedgerError(f"the ledger {path} cannot be read: {err}.") from None
    except json.JSONDecodeError as err:
        raise LedgerError(f"the ledger {path} is not valid JSON ({err}).") from None
    _validate(path, data)
    return data


def _validate(path: Path, data: Any) -> None:
    if not isinstance(data, dict) or not isinstance(data.get("releases"), dict):
        raise LedgerError(f"the ledger {path} has no 'releases' object.")
    fixed_in = data.get("fixed_in")
    if fixed_in is not None:
        try:
            Version(str(fixed_in))
        except InvalidVersion:
            raise LedgerError(f"the ledger {path} has an invalid fixed_in {fixed_in!r}.") from None


def release_key(torch_version: str) -> str:
    """'2.13.0+cpu' -> '2.13.0': ledger entries are per release, not per build."""
    return Version(torch_version).public


def bug_history(ledger: dict[str, Any], bug_id: str) -> tuple[str | None, dict[str, dict[str, Any]]]:
    """(fixed_in, release -> {"static", "dynamic"}) for one bug, from a schema 1 or 2 ledger.

    Schema 1 knew only the original bug, so it holds no history for the others."""
    if ledger.get("schema", 1) >= 2:
        releases = {version: (entry.get("bugs") or {}).get(bug_id) or {}
                    for version, entry in ledger["releases"].items()}
        return ((ledger.get("bugs") or {}).get(bug_id) or {}).get("fixed_in"), releases
    if bug_id != ORIGINAL:
        return None, {}
    return ledger.get("fixed_in"), ledger["releases"]


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


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    lock = path.with_name(path.name + ".lock")
    with open(lock, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def write_atomic(path: Path, data: dict[str, Any]) -> None:
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=2, sort_keys=True)
            out.write("\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def update(path: Path, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Apply ``change`` to the freshest ledger on disk, under the lock, atomically."""
    with _locked(path):
        data = load(path) if path.exists() else new_ledger()
        change(data)
        write_atomic(path, data)
    return data
