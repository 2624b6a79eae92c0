"""Print the tracker's read figures (floors: <= 1.1x the floor bytes and <= 5 requests per release;
the live sweep of every release since 1.8 in under 10 s; the release notes of 12,000 status changes
in under 2 s).

    python benchmarks/bench_tracker.py --wheel PATH     # a real wheel served on loopback
    python benchmarks/bench_tracker.py --live [--since 1.8] [--index-url URL]
    python benchmarks/bench_tracker.py --notes 12000    # tools.release notes over that many changes

``--wheel``: the wheel (e.g. from ``pip download --no-deps torch==2.13.0``) is served by the tests'
loopback index; the floor is what no reader can skip: the end-of-central-directory records, the
central directory, and each member's local header and compressed data. ``--live`` needs the network
and writes only a temporary ledger.
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from tracker.probe import MEMBERS  # noqa: E402


def floor_bytes(path: Path) -> int:
    """End records + central directory + each member's local header and compressed data."""
    with zipfile.ZipFile(path) as archive, path.open("rb") as raw:
        total = path.stat().st_size - archive.start_dir  # directory and end records
        for member in MEMBERS:
            info = archive.getinfo(member)
            raw.seek(info.header_offset + 26)
            name_length, extra_length = struct.unpack("<HH", raw.read(4))
            total += 30 + name_length + extra_length + info.compress_size
    return total


def tracker(index_url: str, *args: str) -> tuple[dict, float]:
    with tempfile.TemporaryDirectory() as tmp:
        ledger = Path(tmp) / "ledger.json"
        ledger.write_text('{"schema": 2, "bugs": {}, "releases": {}}')
        env = {**os.environ, "PYTHONPATH": str(ROOT), "REPRO_LEDGER": str(ledger)}
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "tracker.check_upstream", "--index-url", index_url, "--json", *args],
            env=env,
            capture_output=True,
            text=True,
        )
        elapsed = time.perf_counter() - start
    if not proc.stdout.strip():
        raise SystemExit(f"the tracker printed no report (exit code {proc.returncode}): {proc.stderr[-500:]}")
    return json.loads(proc.stdout), elapsed


def on_loopback(wheel: Path) -> None:
    from index_server import IndexServer

    server = IndexServer()
    server.wheels[wheel.name] = wheel.read_bytes()
    try:
        report, elapsed = tracker(server.start())
    finally:
        server.stop()
    probe = report["releases"][0]["probe"]
    floor = floor_bytes(wheel)
    print(f"wheel             {wheel.name} ({wheel.stat().st_size:,} bytes)")
    print(f"floor             {floor:,} bytes (end records, central directory, {len(MEMBERS)} members)")
    print(
        f"read              {probe['bytes_fetched']:,} bytes  ratio {probe['bytes_fetched'] / floor:.3f}x  "
        f"(floor: <= 1.1x)"
    )
    print(f"requests          {probe['requests']}  (floor: <= 5)   probe took {elapsed:.1f} s")


def live(index_url: str, since: str) -> None:
    report, elapsed = tracker(index_url, "--since", since)
    probes = [r["probe"] for r in report["releases"] if r.get("probe")]
    shares = [p["bytes_fetched"] / p["wheel_size"] for p in probes if p.get("wheel_size")]
    print(f"releases probed   {len(probes)}")
    print(f"sweep time        {elapsed:.1f} s  (floor: < 10 s)")
    print(f"max share fetched {max(shares):.2%}")
    print(f"max requests      {max(p['requests'] for p in probes)}  (floor: <= 5)")


def notes(changes: int) -> None:
    """``tools.release.notes`` over ``changes`` status changes: 4 bugs flipping at every new release."""
    from tools import release

    bugs: dict[str, dict] = {f"bug-{b}": {"fixed_in": None, "regressions": []} for b in range(4)}
    before: dict = {"schema": 2, "bugs": json.loads(json.dumps(bugs)), "releases": {}}
    after: dict = {"schema": 2, "bugs": json.loads(json.dumps(bugs)), "releases": {}}
    for i in range(changes // len(bugs) + 1):
        verdict = "fixed" if i % 2 else "present"
        after["releases"][f"3.{i}.0"] = {"bugs": {bug: {"dynamic": {"verdict": verdict}} for bug in bugs}}
    start = time.perf_counter()
    release.notes(before, after, "0.2.0", "0.1.0")
    took = time.perf_counter() - start
    print(f"release notes, {changes} status changes: {took:.2f} s (floor: < 2 s) {'met' if took < 2 else 'MISSED'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--wheel", type=Path, help="a torch wheel to serve on loopback")
    mode.add_argument("--live", action="store_true", help="sweep the live index")
    mode.add_argument("--notes", type=int, metavar="N", help="time the release notes of N status changes")
    parser.add_argument("--since", default="1.8")
    parser.add_argument("--index-url", default="https://pypi.org")
    args = parser.parse_args()
    if args.wheel:
        on_loopback(args.wheel)
    elif args.notes:
        notes(args.notes)
    else:
        live(args.index_url, args.since)


if __name__ == "__main__":
    main()
