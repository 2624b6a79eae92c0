"""``python -m repro.filing.scenario_runs [--device D] [--slow] [--bug ID]``: one JSON object with every
default scenario run's summary (``--slow``: every scenario's; ``--bug``: and that bug's whole scope),
as ``python -m repro --json`` lists them, and nothing else. A candidate fix that must be applied
before torch loads is judged from this (``python -m repro.run_patched BUG:CANDIDATE -m
repro.filing.scenario_runs --bug BUG``): no report, ledger or root cause is worked out that the
judging ignores."""

from __future__ import annotations

import argparse
import json

from repro.environment import DEVICE_CHOICES, EnvironmentProblem, resolve_environment
from repro.output import emit, leave


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m repro.filing.scenario_runs", description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=DEVICE_CHOICES, default="auto")
    parser.add_argument("--slow", action="store_true", help="every scenario, not only the default ones")
    parser.add_argument("--bug", action="append", default=[], help="also every scenario of this bug's scope")
    args = parser.parse_args(argv)
    try:
        device = resolve_environment(args.device).device
    except EnvironmentProblem as problem:
        emit(json.dumps({"scenarios": [], "cannot_test": str(problem)}))
        return 2
    from repro.catalogue import explain, select
    from repro.engine.oracle import run_all
    from repro.report import scenario_summary

    run = run_all(device, select([], args.slow, also=tuple(args.bug)).scenarios, explains=explain)
    emit(json.dumps({"scenarios": [scenario_summary(r) for r in run.results], "cannot_test": run.cannot_test}))
    return 0 if not run.cannot_test else 2


if __name__ == "__main__":
    leave(main())  # no exit-time collection: the judging process waits on this one's exit
