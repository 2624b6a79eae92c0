"""Print the tracker's figures on the live index (floors: <= 1% of a wheel and <= 10 requests per
release; every release since 1.8 in under 20 s). Needs the network; writes only a temporary ledger.

    python benchmarks/bench_tracker.py [--since 1.8] [--index-url URL]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--since", default="1.8")
    parser.add_argument("--index-url", default="https://pypi.org")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ledger = Path(tmp) / "ledger.json"
        ledger.write_text('{"schema": 1, "fixed_in": null, "releases": {}}')
        env = {**os.environ, "PYTHONPATH": str(ROOT), "REPRO_LEDGER": str(ledger)}
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "tracker.check_upstream", "--since", args.since,
                               "--index-url", args.index_url, "--json"], env=env, capture_output=True, text=True)
        elapsed = time.perf_counter() - start
    statics = [r["static"] for r in json.loads(proc.stdout)["releases"] if r["static"]]
    shares = [s["bytes_fetched"] / s["wheel_size"] for s in statics if s.get("wheel_size")]
    print(f"releases probed   {len(statics)} (exit code {proc.returncode})")
    print(f"sweep time        {elapsed:.1f} s  (floor: < 20 s)")
    print(f"max share fetched {max(shares):.2%}  (floor: <= 1%)")
    print(f"max requests      {max(s['requests'] for s in statics)}  (floor: <= 10)")


if __name__ == "__main__":
    main()
