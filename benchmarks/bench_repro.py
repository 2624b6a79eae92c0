"""Print the reproducer's speed figures (floors: repro <= 1.5x `import torch`; --candidates and
--markdown <= 2x repro; the quick suite, `python -m pytest`, < 60 s; the slow tier has no floor).

    python benchmarks/bench_repro.py [--runs N] [--skip-suite]

Each command runs in a fresh interpreter, as a user runs it. The commands take turns, one round after
another, and each ratio is the median over the N rounds of that round's ratio: load on a shared host
drifts over a minute, and a ratio taken within one round sees the same load on both sides.
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
COMMANDS = {
    "import torch": ["-c", "import torch"],
    "python -m repro": ["-m", "repro"],
    "--candidates": ["-m", "repro", "--candidates"],
    "--markdown": ["-m", "repro", "--markdown"],
}


def seconds(args: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, check=False)
    return time.perf_counter() - start


def rounds(runs: int) -> list[dict[str, float]]:
    """``runs`` rounds, each timing every command once, in turn."""
    return [{name: seconds(args) for name, args in COMMANDS.items()} for _ in range(runs)]


def ratio(measured: list[dict[str, float]], name: str, base: str) -> float:
    return statistics.median(r[name] / r[base] for r in measured)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--skip-suite", action="store_true")
    args = parser.parse_args()
    measured = rounds(args.runs)

    def median(name: str) -> float:
        return statistics.median(r[name] for r in measured)

    print(f"import torch      {median('import torch'):6.2f} s (median of {args.runs} rounds)")
    print(
        f"python -m repro   {median('python -m repro'):6.2f} s  "
        f"ratio {ratio(measured, 'python -m repro', 'import torch'):.2f}x  (floor: <= 1.5x)"
    )
    for option in ("--candidates", "--markdown"):
        print(
            f"  {option:<15} {median(option):6.2f} s  ratio {ratio(measured, option, 'python -m repro'):.2f}x "
            "python -m repro  (floor: <= 2x)"
        )
    if not args.skip_suite:
        suite = seconds(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        print(f"pytest (quick)    {suite:6.2f} s  ratio {suite / 60:.2f} of the 60 s budget")
        slow = seconds(["-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "slow"])
        print(f"pytest -m slow    {slow:6.2f} s  (no floor; CI runs it after the quick suite)")


if __name__ == "__main__":
    main()
