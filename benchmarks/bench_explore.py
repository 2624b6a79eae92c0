"""Measure the explorer against its floors; exit 0 only when every floor is met.

    python benchmarks/bench_explore.py [--budget SECONDS] [--seed N] [--keep PATH]

It runs ``python -m repro --explore --json`` as a user does (a fresh interpreter, the workers it
forks) and prints what that run measured: generated cases per second of search on this machine
(floor: 10, each case a fresh pair of classes and its drawn steps, with at least one call), the
share of the twins' time TorchScript adds (the twin under test's time beyond its eager twin's:
compiling its classes and running compiled code), the largest resident memory a worker reached and
that of any process the command ran (its own included), how often each kind of step was drawn, and
**rediscovery**: which catalogued bugs the run found and attributed with no hint, each with the
index of the first case that found it (floor: 16 of the catalogue's bugs in a 600-second run from
one seed, on two cores). A bug it does not rediscover marks a blind spot of the generator.
``--keep PATH`` writes the run's JSON there: its departures, each unexplained one with its script.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CASES_PER_SECOND = 10.0
REDISCOVERED = 16


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", type=float, default=600.0, help="seconds of exploration (default 600)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, help="write the run's JSON report to this file")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from repro.catalogue import BUGS

    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "repro", "--explore", "--json", "--budget", str(args.budget), "--seed", str(args.seed)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    wall = time.monotonic() - started
    if proc.returncode not in (0, 1):
        print(f"python -m repro --explore failed (exit {proc.returncode}): {proc.stderr.strip()[-300:]}")
        return 2
    report = json.loads(proc.stdout)
    if args.keep:
        args.keep.write_text(proc.stdout, encoding="utf-8")
    rate = report["cases"] / report["seconds"] if report["seconds"] else 0.0
    found: dict[str, int] = {}
    for departure in report["departures"]:
        if departure["cause"]:
            found[departure["cause"]] = min(found.get(departure["cause"], 10**9), departure["first_case"])
    rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    command = f"python -m repro --explore --json --budget {args.budget:.0f} --seed {args.seed}"
    print(f"{command}: exit {proc.returncode}, {wall:.0f} s wall, torch {report['torch_version']}")
    print(
        f"  cases: {report['cases']} in {report['seconds']:.0f} s of search: {rate:.1f} a second "
        f"(floor {CASES_PER_SECOND:.0f})"
    )
    costs = report["costs"]
    print(
        f"  time in TorchScript: {costs['torchscript_share']:.0%} of the twins' time (the twins under test took "
        f"{costs['scripted_twins_s']:.0f} s, their eager twins {costs['eager_twins_s']:.0f} s)"
    )
    print(f"  largest resident memory of a worker: {costs['worker_peak_rss_mb']:.0f} MB")
    print(f"  largest resident memory of a process the command ran (its own, with torch, included): {rss_mb:.0f} MB")
    print(f"  steps drawn: {', '.join(f'{k} {v}' for k, v in sorted(report['steps_drawn'].items()))}")
    print(f"  departures: {len(report['departures'])} distinct, {report['unexplained']} unexplained")
    print(f"  rediscovered: {len(found)} of {len(BUGS)} catalogued bugs (floor {REDISCOVERED}):")
    for bug_id in BUGS:
        print(f"    {bug_id:<36} {'case ' + str(found[bug_id]) if bug_id in found else 'not found'}")
    met = rate >= CASES_PER_SECOND and len(found) >= REDISCOVERED
    print("every floor met" if met else "a floor is not met")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
