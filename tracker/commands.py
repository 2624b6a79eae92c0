"""git and gh, run for the workflows' scripts: output on success, one line of why on failure."""

from __future__ import annotations

import subprocess
from pathlib import Path


class CommandFailed(Exception):
    """git or gh exited non-zero: its last line of output says why."""


def run(args: list[str], cwd: Path) -> str:
    """``args``' standard output; ``CommandFailed`` naming the command and its last line otherwise."""
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        said = (proc.stderr.strip() or proc.stdout.strip() or f"exit code {proc.returncode}").splitlines()[-1]
        raise CommandFailed(f"{' '.join([Path(args[0]).name, *args[1:3]])}: {said}")
    return proc.stdout
