"""Dynamic confirmation: install one torch in a throwaway environment and run the reproducer there.

uv is used when present, else ``venv --without-pip`` filled by this interpreter's pip
(``pip --python``, pip 22.3 or newer). The project is put on ``PYTHONPATH``
rather than installed, so only torch and its dependencies are downloaded. The environment
is removed afterwards, whatever happened.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Dynamic:
    verdict: str  # fixed | present | different | cannot-test
    detail: str


def confirm(version: str, index_url: str, timeout: float) -> Dynamic:
    """Install ``torch==version`` from ``index_url`` and run ``python -m repro --json``."""
    with tempfile.TemporaryDirectory(prefix=f"torch-{version}-") as tmp:
        env_dir = Path(tmp) / "venv"
        try:
            python = _create(env_dir, version, index_url, timeout)
            proc = subprocess.run(
                [str(python), "-m", "repro", "--json", "--device", "cpu"], cwd=tmp, timeout=timeout,
                capture_output=True, text=True,
                env={**os.environ, "PYTHONPATH": str(PROJECT)},
            )
        except subprocess.TimeoutExpired:
            return Dynamic("cannot-test", f"timed out after {timeout:.0f} s")
        except subprocess.CalledProcessError as err:
            tail = (err.stderr or err.stdout or "").strip().splitlines()[-1:] or ["no output"]
            return Dynamic("cannot-test", f"installing torch {version} failed: {tail[0]}")
        try:
            report = json.loads(proc.stdout)
        except ValueError:
            last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            return Dynamic("cannot-test", f"the reproducer printed no report: {last}")
        return Dynamic(report["outcome"], report["conclusion"])


def _create(env_dir: Path, version: str, index_url: str, timeout: float) -> Path:
    python = env_dir / "bin" / "python"
    env = {**os.environ, "PIP_CONSTRAINT": "/dev/null"}  # a machine-wide torch cap must not apply
    requirement = [f"torch=={version}", "packaging"]  # all `python -m repro` imports
    if shutil.which("uv"):
        commands = [["uv", "venv", "-q", "--python", sys.executable, str(env_dir)],
                    ["uv", "pip", "install", "-q", "--python", str(python), "--index-url", index_url,
                     *requirement]]
    else:  # a venv without its own pip (seconds faster), filled by this interpreter's pip
        commands = [[sys.executable, "-m", "venv", "--without-pip", str(env_dir)],
                    [sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                     "--index-url", index_url, *requirement]]
    for command in commands:
        subprocess.run(command, check=True, timeout=timeout, capture_output=True, text=True, env=env)
    return python
