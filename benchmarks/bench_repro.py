"""Print the reproducer's speed figures (floors: repro <= 1.5x `import torch`; --candidates and
--markdown <= 2x repro; the quick suite, `python -m pytest`, < 60 s; the slow tier has no floor).

    python benchmarks/bench_repro.py [--runs N] [--skip-suite]

Each command runs in a fresh interpreter, as a user runs it; the median of N runs is used.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def seconds(args: list[str], runs: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--skip-suite", action="store_true")
    args = parser.parse_args()
    base = seconds(["-c", "import torch"], args.runs)
    repro = seconds(["-m", "repro"], args.runs)
    print(f"import torch      {base:6.2f} s (median of {args.runs})")
    print(f"python -m repro   {repro:6.2f} s  ratio {repro / base:.2f}x  (floor: <= 1.5x)")
    for option in ("--candidates", "--markdown"):
        kit = seconds(["-m", "repro", option], args.runs)
        print(f"  {option:<15} {kit:6.2f} s  ratio {kit / repro:.2f}x python -m repro  (floor: <= 2x)")
    if not args.skip_suite:
        suite = seconds(["-m", "pytest", "-q", "-p", "no:cacheprovider"], 1)
        print(f"pytest (quick)    {suite:6.2f} s  ratio {suite / 60:.2f} of the 60 s budget")
        slow = seconds(["-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "slow"], 1)
        print(f"pytest -m slow    {slow:6.2f} s  (no floor; CI runs it after the quick suite)")


if __name__ == "__main__":
    main()
