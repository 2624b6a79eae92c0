"""Merge a support table measured on another machine into the ledger, as that device's column.

    python -m tracker.device_report REPORT.json --device npu --torch 2.13.0 [--ledger PATH] [--dry-run]
        [--replace]

REPORT.json is what ``python -m repro --support-table --json`` printed on an NPU or CUDA host
(``schema`` 1: ``torch_version``, ``python_version``, ``platform``, ``device``, ``codes``, ``rows`` of
``api``/``cell``/``codes``/``left_out``/``outcomes``). It is outside text: read with bounds, validated,
stored raw as that device's column of the release, ``releases[torch].support[device]`` (``python``,
``platform``, ``rows``, and ``torch`` and ``merged_at``), the same shape as the CPU column the tracker
measures, and shown only through the sanitiser. It is refused in one sentence when its schema is not
the one this version reads, its torch is not ``--torch`` (local builds such as ``+cu126`` share their
release's key), its device is not ``--device``, its shape is not the support table's JSON, or a cell
has a code that is neither one of the support table's words nor a bug id (the catalogue's, or one the
ledger already knows); and when the ledger lacks the release, or already holds that device's column
of it (``--replace`` replaces it, and says what it replaced). ``--dry-run`` decides exactly as the
real run does, on the same path, and writes nothing. Exit codes: 0 merged (or, with ``--dry-run``,
would be), 2 refused or a ledger that cannot be read or written.
"""

from __future__ import annotations

import argparse
import re
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as `python tracker/device_report.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from packaging.version import InvalidVersion

from repro import ledger as ledger_io
from repro.catalogue import BUGS
from repro.formats.support_table import CODES
from repro.sanitise import for_terminal, one_line
from repro.versions import parse as parse_version

DEVICES = ("cuda", "npu", "xpu", "mps", "hpu", "mtia")  # accelerators a support table is measured on
MAX_REPORT_BYTES = 4 * 1024 * 1024  # the CPU report of 2.13.0 is about 40 kB
MAX_ROWS = 1000  # one per nn.Module API: 72 on 2.13.0
API = re.compile(r"[A-Za-z_][A-Za-z0-9_.]{0,199}")  # an API name as the support table writes it
KEYS = {"schema", "torch_version", "python_version", "platform", "device", "codes", "scenario_table", "rows"}
ROW_KEYS = {"api", "cell", "codes", "left_out", "outcomes"}
SCHEMA = 1  # repro.formats.support_table.SCHEMA, the one this version reads


class Refused(Exception):
    """The report cannot be merged (one sentence; exit 2)."""


def read_report(path: Path) -> dict[str, Any]:
    """The report at ``path``, bounded and parsed as the ledger is (integers, depth), or ``Refused``."""
    try:
        if not path.is_file():
            raise Refused(f"the report {path} is not a file.")
        if path.stat().st_size > MAX_REPORT_BYTES:
            raise Refused(f"the report {path} is larger than {MAX_REPORT_BYTES} bytes.")
        return ledger_io.parse(path, path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as err:
        raise Refused(f"the report {path} cannot be read: {err}.") from None
    except ledger_io.LedgerError as err:
        raise Refused(str(err).replace("the ledger ", "the report ", 1)) from None


def validate(path: Path, report: Any, device: str, torch: str) -> dict[str, Any]:
    """The device's support column of a report whose schema, shape, device and torch are the ones
    expected, or ``Refused``."""
    if isinstance(report, dict) and "schema" in report and report["schema"] != SCHEMA:
        raise Refused(
            f"the report {path} has schema {one_line(str(report['schema']), 20)}; this version reads {SCHEMA}."
        )
    if not isinstance(report, dict) or set(report) != KEYS:
        found = sorted(report)[:6] if isinstance(report, dict) else type(report).__name__
        raise Refused(
            f"the report {path} is not the support table's JSON this version reads "
            f"(keys {', '.join(sorted(KEYS))}; found {found})."
        )
    shown_device = one_line(str(report["device"]), 40)
    if not isinstance(report["device"], str) or report["device"].split(":")[0] != device:
        raise Refused(f"the report {path} was measured on '{shown_device}', not on {device}.")
    try:
        measured = ledger_io.release_key(report["torch_version"]) if isinstance(report["torch_version"], str) else None
    except InvalidVersion:
        measured = None
    if measured != torch:
        shown = one_line(str(report["torch_version"]), 40)
        raise Refused(f"the report {path} is of torch '{shown}', not of {torch}.")
    rows = report["rows"]
    if not isinstance(rows, list) or not 0 < len(rows) <= MAX_ROWS:
        raise Refused(f"the report {path} has no list of 1 to {MAX_ROWS} rows.")
    cells: dict[str, Any] = {}
    for row in rows:
        if not (
            isinstance(row, dict)
            and set(row) == ROW_KEYS
            and isinstance(row["api"], str)
            and API.fullmatch(row["api"])
            and isinstance(row["outcomes"], list)
            and ledger_io.valid_column(
                {"python": "", "platform": "", "rows": {row["api"]: {k: row[k] for k in ("codes", "cell", "left_out")}}}
            )
        ):
            raise Refused(
                f"the report {path} has a row that is not an API name with support codes and a cell of at "
                f"most {ledger_io.MAX_CELL} characters: {one_line(repr(row), 60)}"
            )
        if row["api"] in cells:
            raise Refused(f"the report {path} names {row['api']} twice.")
        cells[row["api"]] = {k: row[k] for k in ("codes", "cell", "left_out")}
    column = {"python": report["python_version"], "platform": report["platform"], "rows": cells}
    if isinstance(report["scenario_table"], str):
        column["table"] = report["scenario_table"][:16]
    if not ledger_io.valid_column(column):
        raise Refused(f"the report {path} has no Python version and platform of at most 64 characters each.")
    return column


def merge(
    ledger: Path, torch: str, device: str, full_version: str, column: dict[str, Any], *, replace: bool, write: bool
) -> str:
    """Record ``column`` as ``device``'s column of release ``torch`` (locked, atomic; with ``write``
    False, decided the same way on the ledger as it is, and not written): the release must already be
    in the ledger (the tracker made its CPU column), every code of the column known, and a column
    already there replaced only with ``replace``. Returns what it replaced ("" for nothing)."""
    replaced = []

    def change(data: dict[str, Any]) -> None:
        entry = data["releases"].get(torch)
        if entry is None:
            raise Refused(f"the ledger {ledger} has no release {torch}: check it first (check_upstream --versions).")
        known = {*CODES, *BUGS, *data["bugs"]} - {"BUG"}
        unknown = sorted({code for row in column["rows"].values() for code in row["codes"] if code not in known})
        if unknown:
            raise Refused(
                f"the report has a code that is neither a support table's word nor a bug id the catalogue or "
                f"the ledger knows: {one_line(', '.join(unknown), 60)}."
            )
        before = entry.get("support", {}).get(device)
        if before is not None:
            when = one_line(str(before.get("merged_at", "by the tracker")), 40)
            if not replace:
                raise Refused(
                    f"the ledger {ledger} already holds a {device} column of torch {torch} (merged {when}): "
                    "--replace replaces it."
                )
            replaced.append(f"the {device} column of torch {torch} merged {when}")
        entry.setdefault("support", {})[device] = {
            **column,
            "torch": full_version,
            "merged_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        }

    if write:
        ledger_io.update(ledger, change)
    else:
        change(ledger_io.load(ledger))
    return replaced[0] if replaced else ""


def _device(text: str) -> str:
    if text not in DEVICES:
        raise argparse.ArgumentTypeError(f"not an accelerator this reads: {text!r} (one of {', '.join(DEVICES)})")
    return text


def _torch(text: str) -> str:
    try:
        return ledger_io.release_key(parse_version(text))
    except InvalidVersion:
        raise argparse.ArgumentTypeError(f"not a version: {text[:40]!r}") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="device_report", description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path, help="python -m repro --support-table --json's output")
    parser.add_argument("--device", type=_device, required=True, help="the device it must have been measured on")
    parser.add_argument("--torch", type=_torch, required=True, help="the torch release it must be of")
    parser.add_argument("--ledger", type=Path, help="the ledger (default: $REPRO_LEDGER, else the checkout's)")
    parser.add_argument("--dry-run", action="store_true", help="decide as a real run does; write nothing")
    parser.add_argument("--replace", action="store_true", help="replace that device's column if there is one")
    args = parser.parse_args(argv)
    ledger = args.ledger or ledger_io.ledger_path()
    try:
        from tracker.check_upstream import refuse_installed

        report = read_report(args.report)
        column = validate(args.report, report, args.device, args.torch)
        refuse_installed(ledger)
        ledger_io.check_writable(ledger)
        if not ledger.exists():
            raise Refused(f"the ledger {ledger} does not exist.")
        replaced = merge(
            ledger,
            args.torch,
            args.device,
            report["torch_version"],
            column,
            replace=args.replace,
            write=not args.dry_run,
        )
    except (Refused, ledger_io.LedgerError) as problem:
        print(for_terminal(f"device_report: error: {problem}"), file=sys.stderr)
        return 2
    done = "would merge" if args.dry_run else "merged"
    said = f"; {'would replace' if args.dry_run else 'replaced'} {replaced}" if replaced else ""
    print(
        for_terminal(f"{done} {len(column['rows'])} cells of torch {args.torch} on {args.device} into {ledger}{said}")
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
