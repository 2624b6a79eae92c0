"""Measure the reproducer's speed against its floors; exit 0 only when every floor is met.

    python benchmarks/bench_repro.py [--runs N] [--bug ID ...] [--skip-suite]

Floors: `python -m repro` <= 1.5x `import torch`; `--slow` and `--support-table` <= 1.25x their limit,
``T(import torch) + W / min(processes, cores)``, where ``W`` is the CPU seconds of the run's scenario
work, measured here in the same round in one process (what forked copies share, at best perfectly);
for every bug, `--markdown --bug X` and `--candidates --bug X` <= 2x `python -m repro --bug X` (2.25x
for a bug with three in-process candidates, which sit on the critical path); the quick suite
(`python -m pytest`) < 60 s. Each command runs in a fresh interpreter, as a user runs it. The
commands take turns, one round after another, and each ratio is the median over the rounds of that
round's ratio: load on a shared host drifts over a minute, and a ratio taken within one round sees
the same load on both sides. It also prints the cost as work grows, for the default and the `--slow`
run in one process: milliseconds per scenario run, TorchScript classes compiled (per model class the
runs build) and ScriptModules built.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


LIMIT = "limit"  # a floor's base: T(import torch) + W / min(processes, cores), measured in each round
CRITICAL_CANDIDATES = 3  # in-process candidates that, run one after another, lengthen --candidates


@dataclass(frozen=True)
class Floor:
    """``name`` takes at most ``times`` the time of ``base`` (a ratio, within each round)."""

    name: str
    args: tuple[str, ...]
    base: str
    times: float


def floors(bug_ids: list[str]) -> list[Floor]:
    from repro.catalogue import BUGS

    top = [
        Floor("python -m repro", ("-m", "repro"), "import torch", 1.5),
        Floor("--slow", ("-m", "repro", "--slow"), LIMIT, 1.25),
        Floor("--support-table", ("-m", "repro", "--support-table"), LIMIT, 1.25),
    ]
    per_bug = [
        Floor(
            f"{option} --bug {bug_id}",
            ("-m", "repro", option, "--bug", bug_id),
            f"--bug {bug_id}",
            2.25 if sum(c.in_process for c in BUGS[bug_id].fixes.candidates) >= CRITICAL_CANDIDATES else 2.0,
        )
        for bug_id in bug_ids
        for option in ("--markdown", "--candidates")
    ]
    return top + per_bug


def parallel() -> int:
    """``min(processes, cores)``: how many of the CLI's processes can run at once here."""
    from repro.engine.forked import usable_processes

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return min(usable_processes("cpu"), cores)


def bases(bug_ids: list[str]) -> dict[str, tuple[str, ...]]:
    """The commands the floors are relative to."""
    return {"import torch": ("-c", "import torch"), **{f"--bug {b}": ("-m", "repro", "--bug", b) for b in bug_ids}}


@dataclass(frozen=True)
class Timed:
    seconds: float
    failed: str  # why the command did not complete (its exit code and last line), "" when it did


def timed(args: tuple[str, ...]) -> Timed:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    took = time.perf_counter() - start
    if proc.returncode not in (0, 1):  # 1: the bugs differ from the ledger's expectation, still a full run
        said = (proc.stderr.strip() or proc.stdout.strip() or "no output").splitlines()[-1].split("error: ")[-1]
        return Timed(took, f"exit {proc.returncode}: {said}")
    return Timed(took, "")


WORK = """
import resource, runpy, sys, time
import torch
torch.set_num_threads(1)  # as in the CLI's forked copies: the work's own CPU, no idle OpenMP spinning
import repro.engine.forked as forked
spent = [0.0]
share = forked.shared
def shared(*args, **kwargs):
    start = time.process_time()
    try:
        return share(*args, **kwargs)
    finally:
        spent[0] += time.process_time() - start
forked.shared = shared
sys.argv = ["repro", *sys.argv[1:]]
try:
    runpy.run_module("repro", run_name="__main__", alter_sys=True)
except SystemExit:
    pass
print(f"WORK {spent[0]:.4f}", file=sys.stderr)
"""


def work(args: tuple[str, ...]) -> Timed:
    """``W``: the CPU seconds of ``args``' scenario work (``forked.shared``), run in one process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "REPRO_PROCESSES": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", WORK, *args[2:]], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    said = [line.split()[1] for line in proc.stderr.splitlines() if line.startswith("WORK ")]
    if not said or float(said[0]) <= 0:
        return Timed(0.0, f"no scenario work measured (exit {proc.returncode})")
    return Timed(float(said[0]), "")


def base_of(round_: dict[str, Timed], floor: Floor) -> float:
    """The seconds ``floor``'s command is measured against, in one round."""
    if floor.base != LIMIT:
        return round_[floor.base].seconds
    return round_["import torch"].seconds + round_[f"W {floor.name}"].seconds / parallel()


def verdict(rounds: list[dict[str, Timed]], floor: Floor) -> tuple[str, bool]:
    """One or two lines for ``floor`` (at most 100 columns) and whether it is met."""
    base = {LIMIT: LIMIT, "import torch": "import torch"}.get(floor.base, "--bug")
    needed = (floor.name, "import torch", f"W {floor.name}") if floor.base == LIMIT else (floor.name, floor.base)
    failed = next((r[name].failed for r in rounds for name in needed if r[name].failed), "")
    if failed:
        return f"{floor.name:<52} not measured: MISSED\n    ({failed[:92]})", False
    ratio = statistics.median(r[floor.name].seconds / base_of(r, floor) for r in rounds)
    took = statistics.median(r[floor.name].seconds for r in rounds)
    met = ratio <= floor.times
    line = f"{floor.name:<52} {took:5.1f} s {ratio:4.2f}x {base} (<= {floor.times}x) {'met' if met else 'MISSED'}"
    if floor.base == LIMIT:
        w = statistics.median(r[f"W {floor.name}"].seconds for r in rounds)
        limit = statistics.median(base_of(r, floor) for r in rounds)
        line += f"\n    limit {limit:.2f} s = import torch + W {w:.2f} s of CPU / {parallel()} (medians)"
    return line, met


COUNTING = """
import runpy, sys
from repro.engine.compilations import counted
sys.argv = ["repro", *sys.argv[1:]]
with counted() as count:
    try:
        runpy.run_module("repro", run_name="__main__", alter_sys=True)
    except SystemExit:
        pass
from repro.catalogue import select
from repro.engine.models import INSTANCES, MODELS, styles_of
runs = select([], "--slow" in sys.argv).scenarios
own = sum(MODELS[s.model].classes * len(styles_of(s.model)) * len(INSTANCES) for s in runs)
print(f"COMPILATIONS {count.classes} {count.instances} {own}", file=sys.stderr)
"""


def growth(tier: tuple[str, ...]) -> str:
    """Scenario runs, milliseconds per scenario run, TorchScript class compilations (per model class the
    runs build) and ScriptModules built, of one run of ``tier`` in one process (a forked copy's
    compilations are its own)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "REPRO_PROCESSES": "1"}
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", COUNTING, *tier, "--json"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    took = time.perf_counter() - start
    counts = next((line.split()[1:] for line in proc.stderr.splitlines() if line.startswith("COMPILATIONS ")), [])
    try:
        runs = len(json.loads(proc.stdout)["scenarios"])
        classes, instances, own = (int(n) for n in counts)
    except (ValueError, KeyError):
        return f"{' '.join(tier) or 'default':<10} no report (exit {proc.returncode})"
    return (
        f"{' '.join(tier) or 'default':<10} in one process: {runs} scenario runs, "
        f"{took / max(runs, 1) * 1000:.1f} ms each ({took:.2f} s);\n{'':<10} {classes} TorchScript classes "
        f"compiled ({classes / max(own, 1):.2f} per model class its runs build),\n{'':<10} {instances} "
        "ScriptModules built"
    )


def _bug_id(text: str) -> str:
    """A catalogued bug's id, or a usage error in one line (argparse's choices would list all 18)."""
    from repro.catalogue import BUGS  # the catalogue, not torch: imported when an id is given

    if text not in BUGS:
        raise argparse.ArgumentTypeError(f"unknown bug {text[:24]!r}; see --list-bugs")
    return text


def main() -> int:
    from repro.catalogue import BUGS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="rounds (default 3)")
    parser.add_argument("--bug", action="append", type=_bug_id, metavar="ID", help="only these bugs' floors")
    parser.add_argument("--skip-suite", action="store_true", help="leave out the quick suite's floor")
    args = parser.parse_args()
    bug_ids = args.bug or list(BUGS)
    checks, reference = floors(bug_ids), bases(bug_ids)
    commands = {**reference, **{f.name: f.args for f in checks}}
    limited = [f for f in checks if f.base == LIMIT]
    rounds = [
        {
            **{name: timed(cmd) for name, cmd in commands.items()},
            **{f"W {f.name}": work(f.args) for f in limited},
        }
        for _ in range(args.runs)
    ]
    torch_s = statistics.median(r["import torch"].seconds for r in rounds)
    print(f"import torch {torch_s:.2f} s (median of {args.runs} rounds); ratios are medians of per-round ratios")
    results = [verdict(rounds, f) for f in checks]
    for line, _ in results:
        print(line)
    met = all(ok for _, ok in results)
    if not args.skip_suite:
        suite = timed(("-m", "pytest", "-q", "-p", "no:cacheprovider"))
        ok = not suite.failed and suite.seconds < 60
        print(f"{'pytest (quick suite)':<52} {suite.seconds:5.1f} s (< 60 s) {'met' if ok else 'MISSED'}")
        met = met and ok
    for tier in ((), ("--slow",)):
        print(growth(tier))
    print("every floor met: exit 0" if met else "a floor was missed or could not be measured: exit 1")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
