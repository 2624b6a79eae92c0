"""The ledger: one JSON file recording what is known about each catalogued bug per torch release.

Schema 3: ``bugs[id]`` holds ``fixed_in`` and ``regressions``; ``releases[version]`` holds when it
was checked, whether its wheel is yanked, what reading the wheel cost (``probe``), under
``bugs[id]`` the static and dynamic verdicts and what proving its workaround found (``workaround``,
optional), and under ``support[device]`` the measured support table (where: ``python``,
``platform``; per API: ``codes``, ``cell``, ``left_out``). Schema 1 (the
original bug only) and 2 (support cells as text, kept as ``support_legacy``) are migrated on read
and written back only as schema 3.

The CLI and the tests read it to know what to expect from the installed torch; the
upstream tracker writes it. ``REPRO_LEDGER=/path`` points both at another file. Writes go
through ``update``: an exclusive lock, a temporary file and an atomic rename, so neither
a crash nor a concurrent run can corrupt the file or lose an entry. The file keeps its mode,
a symlinked ledger is written through to its target, and the temporary file of a writer that
was killed is removed by the next one.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.version import Version

from repro import atomic
from repro.versions import parse as parse_version
from repro.versions import parsed_or_none
from repro.vocabulary import Outcome, ProofStatus, Status, WorkaroundVerdict

DEFAULT_PATH = Path(__file__).with_name("ledger.json")
SCHEMA = 3
# The codes a support cell is made of (repro.formats.support_table.CODES, a bug id where BUG is).
SUPPORT_CODES = ("ok", "design", "undocumented", "unexplained", "absent", "not-run", "eager-fails")
DEVICE = re.compile(r"[a-z][a-z0-9_]{0,15}")  # a support column's device: cpu, cuda, npu
OUTCOMES = tuple(o.value for o in Outcome)  # a report's outcome (python -m repro --json)
# A bug's status on one release, as a dynamic run measured it: ``incomplete-fix`` is a bug whose own
# symptom is gone while its APIs still depart from nn.Module in ways no catalogued bug explains.
STATUSES = tuple(s.value for s in Status if s is not Status.SKIPPED)  # skipped is never stored
EXPECTABLE = (Status.PRESENT, Status.FIXED, Status.INCOMPLETE_FIX, Status.CANNOT_TEST)  # a confirmed result's
# What proving a bug's workaround on a release measured (repro.proof.Proof.status): every run of its scope
# matches eager; it does outside the (shape, style) pairs it declares; some run still departs; no run of
# its scope matched (this torch lacks its APIs); none declared.
WORKAROUND_STATUSES = tuple(s.value for s in ProofStatus)
PROOF_KEYS = ("status", "workaround", "runs", "matched", "summary")  # of a proof the ledger records per bug
WORKAROUND_VERDICTS = ("", *(v.value for v in WorkaroundVerdict))  # "": no workaround, or nothing observed
STATIC_VERDICTS = ("present", "changed", "removed", "unknown", "not-applicable")  # source_checks.StaticVerdict
TEXT_CAP = 500  # characters of one string from outside (URL, evidence, error, pip's last line) the ledger keeps
CUT = "…[cut]"
ORIGINAL = "full-backward-hook-flag"  # the one bug a schema-1 ledger knows
MAX_BYTES = 16 * 1024 * 1024  # read and write: the committed ledger is ~1.3 MB; a runaway one is refused
BUG_ID = re.compile(r"(?=.{1,64}$)[a-z0-9]+(?:-[a-z0-9]+)*")  # a catalogue id: no markup, no control
MAX_UNEXPLAINED = 20  # unexplained departures an explorer record lists (one line each); the rest are counted
MAX_CELL = 2000  # characters of one support-table cell read (written ones are cut to TEXT_CAP, 500)
PROBE_KEYS = ("wheel", "wheel_size", "bytes_fetched", "requests")  # what reading a wheel cost, per release


class LedgerError(Exception):
    """The ledger cannot be read or is malformed (one sentence; CLI exit code 2)."""


@dataclass(frozen=True)
class Expectation:
    """What the ledger says the installed torch should show, and why."""

    outcome: str  # one of EXPECTABLE
    reason: str


def ledger_path() -> Path:
    return Path(os.environ.get("REPRO_LEDGER") or DEFAULT_PATH)


def new_ledger() -> dict[str, Any]:
    return {"schema": SCHEMA, "bugs": {}, "releases": {}}


def load(path: Path) -> dict[str, Any]:
    """Read, validate and (from schemas 1 and 2) migrate the ledger at ``path``: always schema 3 in memory."""
    try:
        if not path.is_file():
            raise LedgerError(
                f"the ledger {path} does not exist."
                if not path.exists()
                else f"the ledger {path} is not a regular file."
            )
        if path.stat().st_size > MAX_BYTES:
            raise LedgerError(f"the ledger {path} is larger than {MAX_BYTES} bytes.")
        data = parse(path, path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as err:
        raise LedgerError(f"the ledger {path} cannot be read: {err}.") from None
    return validate(path, migrate(path, data))


MAX_DIGITS = 18  # of one integer: a size or a count (the largest, a wheel's size, has 10)
MAX_DEPTH = 12  # of nested objects and lists: a ledger has 6 (releases, release, bugs, bug, dynamic, evidence)


def parse(path: Path | str, text: str) -> Any:
    """JSON text of a ledger, bounded: an integer of more than ``MAX_DIGITS`` digits, a non-finite number
    or nesting deeper than ``MAX_DEPTH`` is malformed, in one sentence (``LedgerError``)."""

    def integer(digits: str) -> int:
        if len(digits.lstrip("-")) > MAX_DIGITS:
            raise LedgerError(f"the ledger {path} has an integer of {len(digits.lstrip('-'))} digits.")
        return int(digits)

    def constant(name: str) -> float:
        raise LedgerError(f"the ledger {path} has the number {name}, which JSON does not allow.")

    try:
        data = json.loads(text, parse_int=integer, parse_constant=constant)
    except json.JSONDecodeError as err:
        raise LedgerError(f"the ledger {path} is not valid JSON ({err}).") from None
    except RecursionError:
        raise LedgerError(f"the ledger {path} is nested too deeply to be a ledger.") from None
    if _depth(data) > MAX_DEPTH:
        raise LedgerError(f"the ledger {path} is nested deeper than {MAX_DEPTH} levels.")
    return data


def _depth(value: Any) -> int:
    """How deeply ``value`` nests objects and lists, without recursion."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        item, level = todo.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, level)
            todo += [(child, level + 1) for child in (item.values() if isinstance(item, dict) else item)]
    return deepest


def migrate(path: Path, data: Any) -> dict[str, Any]:
    """Schema 1 (one bug: top-level ``fixed_in``, ``releases[v].static/dynamic``) to 2 (per bug), then to 3."""
    if not isinstance(data, dict):
        raise LedgerError(f"the ledger {path} is not a JSON object.")
    schema = data.get("schema")
    if schema is None:
        raise LedgerError(f"the ledger {path} has no schema number.")
    if schema == SCHEMA:
        return _failed_installs_to_errors(data)
    if schema == 2:
        return _failed_installs_to_errors(_support_per_device(data))
    if schema != 1:
        raise LedgerError(f"the ledger {path} has schema {schema!r}; this version reads 1, 2 and 3.")
    releases = data.get("releases")
    if not isinstance(releases, dict) or not all(isinstance(e, dict) for e in releases.values()):
        raise LedgerError(f"the ledger {path} has no 'releases' object of release objects.")
    migrated = {
        **{k: v for k, v in data.items() if k not in ("fixed_in", "regressions")},
        "schema": 2,
        "bugs": {ORIGINAL: {"fixed_in": data.get("fixed_in"), "regressions": data.get("regressions", [])}},
        "releases": {version: _migrate_release(entry) for version, entry in releases.items()},
    }
    return _failed_installs_to_errors(_support_per_device(migrated))


def _support_per_device(data: dict[str, Any]) -> dict[str, Any]:
    """Schema 2 to 3: a release's support cells were one text per API, measured with the scenario table
    before shapes were explored and before refusals needed a source. Schema 3 keeps columns per device,
    each cell with its codes; the old cells are kept verbatim under ``support_legacy`` (not shown as
    measured by this table), never dropped."""
    releases = data.get("releases")
    for entry in releases.values() if isinstance(releases, dict) else ():
        if isinstance(entry, dict) and "support" in entry:
            entry["support_legacy"] = entry.pop("support")
    return {**data, "schema": SCHEMA}


# How the tracker once stored a run that produced no report as a ``cannot-test`` verdict; such a run
# measured nothing, so on read it becomes what it is now: an error of the release, retried next run.
NO_REPORT = ("installing torch ", "timed out after ", "the reproducer printed no report")


def _failed_installs_to_errors(data: dict[str, Any]) -> dict[str, Any]:
    releases = data.get("releases")
    for entry in releases.values() if isinstance(releases, dict) else ():
        bugs = entry.get("bugs") if isinstance(entry, dict) else None
        for verdicts in bugs.values() if isinstance(bugs, dict) else ():
            if not isinstance(verdicts, dict):
                continue
            dynamic, attempt = verdicts.get("dynamic"), verdicts.pop("failed_attempt", None)
            if (
                isinstance(dynamic, dict)
                and dynamic.get("verdict") == "cannot-test"
                and str(dynamic.get("detail", "")).startswith(NO_REPORT)
            ):
                attempt = attempt or {k: dynamic.get(k) for k in ("checked_at", "detail")}
                del verdicts["dynamic"]
            if isinstance(attempt, dict):
                entry.setdefault("error", str(attempt.get("detail")))
                attempts = entry.setdefault("failed_attempts", [])
                if isinstance(attempts, list) and attempt not in attempts:
                    attempts.append(attempt)
    return data


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
        if not BUG_ID.fullmatch(bug_id):
            raise bad(f"a bug id {bug_id[:80]!r} that is not an id (lower-case words and hyphens)")
        shown = repr(bug.get("fixed_in"))[:80]
        _version_or_none(bug.get("fixed_in"), bad(f"an invalid fixed_in {shown} for {bug_id}"))
        if not isinstance(bug.get("regressions", []), list):
            raise bad(f"regressions for {bug_id} that are not a list")
    for version, entry in data["releases"].items():
        _version_or_none(version, bad(f"a release key {version[:80]!r} that is not a version"))
        if release_key(version) != version:  # a key the code never writes would never be read either
            raise bad(f"a release key {version!r} that is not in its normal form {release_key(version)!r}")
        if not isinstance(entry, dict) or not isinstance(entry.get("bugs", {}), dict):
            raise bad(f"a release {version} that is not an object with a 'bugs' object")
        if not _cells(entry.get("support_legacy", {})):
            raise bad(f"support cells in {version} that are not API names mapped to strings of {MAX_CELL} at most")
        if not _per_device(entry.get("support", {}), valid_column):
            raise bad(f"a support table in {version} that is not one column per device of rows with codes")
        for bug_id, verdicts in entry.get("bugs", {}).items():
            if not BUG_ID.fullmatch(bug_id):
                raise bad(f"a bug id {bug_id[:80]!r} in {version} that is not an id (lower-case words and hyphens)")
            if not isinstance(verdicts, dict) or not all(
                isinstance(verdicts.get(kind) or {}, dict) for kind in ("static", "dynamic")
            ):
                raise bad(f"verdicts for {bug_id} in {version} that are not objects")
            for kind, spellings in (("static", STATIC_VERDICTS), ("dynamic", STATUSES)):
                verdict = (verdicts.get(kind) or {}).get("verdict")
                if verdicts.get(kind) and verdict not in spellings:
                    raise bad(
                        f"a {kind} verdict {verdict!r} for {bug_id} in {version}, "
                        f"which is none of {', '.join(spellings)}"
                    )
            if "workaround" in verdicts and not valid_proof(verdicts["workaround"]):
                raise bad(f"a workaround proof for {bug_id} in {version} that is not {', '.join(PROOF_KEYS)}")
            if "explored" in verdicts and not valid_explored(verdicts["explored"]):
                raise bad(f"a workaround's record on generated models for {bug_id} in {version} that is not one")
        if not _per_device(entry.get("explore", {}), valid_exploration):
            raise bad(f"an explorer record in {version} that is not one per device of what it ran and found")
    if not isinstance(data.get("upstream_issues", {}), dict):
        raise bad("'upstream_issues' that is not an object")
    return data


def _per_device(records: Any, valid: Callable[[Any], bool]) -> bool:
    """One record per device (``cpu``, ``cuda``...), each one ``valid`` accepts."""
    return isinstance(records, dict) and all(
        isinstance(device, str) and bool(DEVICE.fullmatch(device)) and valid(record)
        for device, record in records.items()
    )


def _cells(cells: Any) -> bool:
    """A schema-2 support column (kept as ``support_legacy``): API names mapped to cells, each bounded."""
    return isinstance(cells, dict) and all(
        isinstance(api, str) and isinstance(c, str) and len(api) <= TEXT_CAP and len(c) <= MAX_CELL
        for api, c in cells.items()
    )


def valid_column(column: Any) -> bool:
    """One device's support column: where it was measured, and per API its codes, cell and left-out runs."""
    if not isinstance(column, dict) or not isinstance(column.get("rows"), dict):
        return False
    for key in ("python", "platform"):
        if not isinstance(column.get(key), str) or len(column[key]) > 64:
            return False
    if not isinstance(column.get("table", ""), str) or len(column.get("table", "")) > 16:
        return False
    return all(
        isinstance(api, str)
        and len(api) <= TEXT_CAP
        and isinstance(row, dict)
        and isinstance(row.get("cell"), str)
        and len(row["cell"]) <= MAX_CELL
        and isinstance(row.get("codes"), list)
        and 0 < len(row["codes"]) <= 32
        and all(isinstance(c, str) and (c in SUPPORT_CODES or BUG_ID.fullmatch(c)) for c in row["codes"])
        and type(row.get("left_out", 0)) is int
        and 0 <= row.get("left_out", 0) <= 100_000
        for api, row in column["rows"].items()
    )


def valid_proof(proof: Any) -> bool:
    """One bug's workaround proof on a release (``repro.proof.Proof.as_dict``, and the scenario table's
    hash and the device where the run gave them): a known status, the workaround's name, run counts, a
    summary line, and (since 2026-12-05) its verdict: holds, loud or silently wrong, and what it held
    on (``space``: calls, sizes, scenarios, shapes, styles, what was compared, the torch), which
    docs/downstream.md prints."""
    return (
        isinstance(proof, dict)
        and set(PROOF_KEYS) <= set(proof) <= {*PROOF_KEYS, "verdict", "table", "device", "space"}
        and proof["status"] in WORKAROUND_STATUSES
        and proof.get("verdict", "") in WORKAROUND_VERDICTS
        and all(isinstance(proof[k], str) and len(proof[k]) <= TEXT_CAP for k in ("workaround", "summary"))
        and isinstance(proof.get("space", ""), str)
        and len(proof.get("space", "")) <= 2 * TEXT_CAP  # fifteen shapes named take ~420 characters
        and all(type(proof[k]) is int and 0 <= proof[k] <= 100_000 for k in ("runs", "matched"))
        and proof["matched"] <= proof["runs"]
        and isinstance(proof.get("table", ""), str)
        and len(proof.get("table", "")) <= 16
        and bool(DEVICE.fullmatch(proof.get("device", "cpu")))
    )


EXPLORATION_KEYS = ("seed", "budget_s", "cases", "replayed", "seconds", "departures", "bugs", "unexplained", "apis")
EXPLORED_KEYS = ("workaround", "verdict", "space", "cases")


def valid_exploration(record: Any) -> bool:
    """What the explorer ran on a release (``python -m repro --explore``, run by the tracker): its seed,
    budget, cases (those replayed from its database among them), seconds; its departures counted by
    what explains them, the catalogued bugs it found, each unexplained one in a line, and per API
    how many cases exercised it."""

    def counts(value: Any, most: int) -> bool:
        return (
            isinstance(value, dict)
            and len(value) <= most
            and all(isinstance(k, str) and len(k) <= TEXT_CAP and _count(n) for k, n in value.items())
        )

    return (
        isinstance(record, dict)
        and set(EXPLORATION_KEYS) <= set(record) <= {*EXPLORATION_KEYS, "checked_at"}
        and all(_count(record[k]) for k in ("seed", "cases", "replayed"))
        and record["replayed"] <= record["cases"]
        and all(_seconds(record[k]) for k in ("budget_s", "seconds"))
        and counts(record["departures"], 8)
        and counts(record["apis"], 200)
        and isinstance(record["bugs"], list)
        and len(record["bugs"]) <= 200
        and all(isinstance(b, str) and BUG_ID.fullmatch(b) for b in record["bugs"])
        and isinstance(record["unexplained"], list)
        and len(record["unexplained"]) <= MAX_UNEXPLAINED
        and all(isinstance(u, str) and len(u) <= TEXT_CAP for u in record["unexplained"])
        and isinstance(record.get("checked_at", ""), str)
        and len(record.get("checked_at", "")) <= 64
    )


def valid_explored(record: Any) -> bool:
    """A workaround's verdict on generated models in its bug's reach (``python -m repro --explore
    --workarounds``, run by the tracker): which workaround, holds, loud or silently wrong, what it
    held on, on how many cases (one at least: no verdict is recorded on none)."""
    return (
        isinstance(record, dict)
        and set(EXPLORED_KEYS) <= set(record) <= {*EXPLORED_KEYS, "checked_at"}
        and record["verdict"] in WORKAROUND_VERDICTS[1:]
        and all(isinstance(record[k], str) and len(record[k]) <= TEXT_CAP for k in ("workaround", "space"))
        and _count(record["cases"])
        and record["cases"] > 0
        and isinstance(record.get("checked_at", ""), str)
        and len(record.get("checked_at", "")) <= 64
    )


def _count(value: Any) -> bool:
    return type(value) is int and 0 <= value <= 10**9


def _seconds(value: Any) -> bool:
    return type(value) in (int, float) and 0 <= value <= 10**6


def _version_or_none(value: Any, problem: LedgerError) -> None:
    if value is not None and parsed_or_none(value) is None:
        raise problem


def release_key(version: str | Version) -> str:
    """The ledger's key for a torch version: one per public release, with three release numbers, as an
    installed torch reports it ('2.13', '2.13.0+cpu', '2.13.0.0' -> '2.13.0'); the CLI and the tracker
    both key by it."""
    public = Version(parse_version(str(version)).public)
    numbers = list(public.release)
    while len(numbers) > 3 and numbers[-1] == 0:
        numbers.pop()
    numbers += [0] * (3 - len(numbers))
    epoch = f"{public.epoch}!" if public.epoch else ""
    rest = str(public)[len(epoch + ".".join(map(str, public.release))) :]  # pre-, post- and dev-release parts
    return epoch + ".".join(map(str, numbers)) + rest


def verdicts_of(entry: dict[str, Any], bug_id: str) -> dict[str, Any]:
    """One release entry's verdicts for one bug (``static``, ``dynamic``, ...); empty where it has none."""
    return (entry.get("bugs") or {}).get(bug_id) or {}


def bug_history(ledger: dict[str, Any], bug_id: str) -> tuple[str | None, dict[str, dict[str, Any]]]:
    """(fixed_in, release -> {"static", "dynamic"}) for one bug."""
    releases = {version: verdicts_of(entry, bug_id) for version, entry in ledger["releases"].items()}
    return (ledger["bugs"].get(bug_id) or {}).get("fixed_in"), releases


def expectation_for(ledger: dict[str, Any], torch_version: str, bug_id: str) -> Expectation:
    """A confirmed result for this very release wins; otherwise the bug is expected
    present unless its ``fixed_in`` is at or below the installed version."""
    key = release_key(torch_version)
    fixed_in, releases = bug_history(ledger, bug_id)
    dynamic = (releases.get(key) or {}).get("dynamic") or {}
    if dynamic.get("verdict") in EXPECTABLE:
        return Expectation(dynamic["verdict"], f"the ledger's confirmed result for {key}")
    if fixed_in is None:
        return Expectation("present", "the ledger records no fixed release (fixed_in is null)")
    if Version(fixed_in) <= Version(torch_version):
        return Expectation("fixed", f"the ledger says fixed in {fixed_in}")
    return Expectation("present", f"the ledger says fixed only in {fixed_in}")


def check_writable(path: Path) -> None:
    """Refuse, before any work, a ledger whose writes would fail: its directory missing or read-only
    (the lock and the temporary file are created there), or the file itself read-only."""
    problem = atomic.unwritable(path)
    if problem:
        raise LedgerError(f"the ledger {path} cannot be written: {problem}.")
    lock = _lock_of(path.resolve())
    if lock.exists() and not lock.is_file():
        raise LedgerError(f"the ledger {path} cannot be written: its lock {lock} is not a file (remove it).")


def _lock_of(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock beside ``path``; whoever holds it is the only writer, so a temporary file
    left there is a killed writer's: removed."""
    lock = _lock_of(path)
    try:
        handle = open(lock, "a")  # noqa: SIM115 -- closed below; an error opening it is one sentence
    except OSError as err:
        raise LedgerError(f"the ledger {path} cannot be written: its lock {lock}: {err.strerror or err}.") from None
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            for stale in atomic.leftovers(path):  # only names this writer makes: never a user's file
                stale.unlink(missing_ok=True)
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def capped(value: Any, limit: int | None = None) -> Any:
    """``value`` with every string in it cut to ``TEXT_CAP`` characters, ending in ``CUT`` where cut: text
    from outside (a wheel URL, pip's last line) is stored raw, but never so long that the ledger stops
    being readable. A support row's ``cell`` keeps up to ``MAX_CELL``, what the reader accepts: its
    conditions name every run. Keys are left alone: release keys are validated versions, the others
    are ours."""
    limit = TEXT_CAP if limit is None else limit
    if isinstance(value, str):
        return value if len(value) <= limit else value[: limit - len(CUT)] + CUT
    if isinstance(value, dict):
        return {key: capped(item, MAX_CELL if key == "cell" else limit) for key, item in value.items()}
    if isinstance(value, list):
        return [capped(item, limit) for item in value]
    return value


def serialise(path: Path, data: dict[str, Any]) -> str:
    """The text a write would store: strings capped, and refused in one sentence if the reader would
    refuse it (``MAX_BYTES``), so that a ledger this writes can always be read back."""
    text = json.dumps(capped(data), indent=2, sort_keys=True) + "\n"
    size = len(text.encode("utf-8"))
    if size > MAX_BYTES:
        raise LedgerError(
            f"the ledger {path} was not written: the result ({size} bytes) would be larger "
            f"than the {MAX_BYTES} bytes it can be read back with; it stays as it was."
        )
    return text


def write_atomic(path: Path, data: dict[str, Any]) -> None:
    """Replace ``path`` with ``data`` in one rename, keeping the file's mode (call with the symlink
    resolved: the rename replaces what it names)."""
    try:
        atomic.replace(path, serialise(path, data))
    except atomic.WriteError as err:  # a full disk, say: the old ledger is intact
        raise LedgerError(f"the ledger {err}") from None


def update(path: Path, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Apply ``change`` to the freshest ledger on disk, under the lock, atomically. A symlinked
    ledger is written through: its target is locked and replaced, the link stays."""
    target = path.resolve()
    if target.exists():
        load(path)  # a file that is no ledger is refused before its lock is made: no .lock left beside it
    with _locked(target):
        data = load(path) if target.exists() else new_ledger()
        change(data)
        write_atomic(target, data)
    return data
