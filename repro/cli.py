"""``python -m repro``: wire environment -> oracle -> report -> format, and pick the exit code.

Exit codes: 0 every observation matches the ledger's expectation for this torch;
1 drift (printed); 2 usage or environment error, or TorchScript cannot be exercised here.
"""

from __future__ import annotations

import argparse
import sys

from repro.environment import DEVICE_CHOICES, EnvironmentProblem, resolve_environment
from repro.ledger import LedgerError, expectation_for, ledger_path, load

EXIT_OK, EXIT_DRIFT, EXIT_ENVIRONMENT = 0, 1, 2


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m repro",
        description="Show which hook APIs of a torch.jit.ScriptModule subclass behave like "
        "an eager nn.Module on the installed torch, and compare with the ledger.",
        epilog="Exit codes: 0 as the ledger expects, 1 drift, 2 usage or environment error. "
        "REPRO_LEDGER=/path reads another ledger.",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--device", choices=DEVICE_CHOICES, default="auto",
        help="where to run (default: the accelerator if present, else cpu)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)  # argparse exits with 2 on bad usage
    try:
        ledger = load(ledger_path())  # before importing torch: bad input fails fast
        environment = resolve_environment(args.device)
        expected = expectation_for(ledger, environment.torch_version)
    except (EnvironmentProblem, LedgerError) as problem:
        print(f"repro: error: {problem}", file=sys.stderr)
        return EXIT_ENVIRONMENT

    from repro.formats import json as json_format, text
    from repro.oracle import run_all
    from repro.report import build_report

    report = build_report(environment, run_all(environment.device), expected)
    print((json_format if args.json else text).render(report))
    if report.matches_expectation:
        return EXIT_OK
    if report.outcome == "cannot-test":
        print(f"repro: error: {report.run.cannot_test or 'nothing to test'}", file=sys.stderr)
        return EXIT_ENVIRONMENT
    return EXIT_DRIFT


def main_entry() -> None:
    """Console-script entry point."""
    raise SystemExit(main())
