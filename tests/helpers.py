"""Run the project's entry points in subprocesses, as a user would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def write_ledger(path: Path, fixed_in: str | None = None, releases: dict | None = None) -> Path:
    path.write_text(json.dumps({"schema": 1, "fixed_in": fixed_in, "releases": releases or {}}))
    return path


def run(args: list[str], *, ledger: Path | None = None, cwd: Path = ROOT,
        env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """``python ARGS`` with the project importable and, optionally, another ledger."""
    inherited = {k: v for k, v in os.environ.items() if k != "TORCH_DEVICE_BACKEND_AUTOLOAD"}
    full_env = {**inherited, "PYTHONPATH": str(ROOT), **(env or {})}  # as from a fresh shell
    if ledger is not None:
        full_env["REPRO_LEDGER"] = str(ledger)
    return subprocess.run([sys.executable, *args], cwd=cwd, env=full_env, capture_output=True,
                          text=True, timeout=timeout)


def run_json(args: list[str], **kwargs: Any) -> tuple[int, dict[str, Any]]:
    proc = run([*args, "--json"], **kwargs)
    return proc.returncode, json.loads(proc.stdout)
