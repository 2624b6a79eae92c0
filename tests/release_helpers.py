"""A scratch git repository in the project's shape for tools.release: a pyproject.toml holding the
code version where the project's does, the ledger under repro/, commits at chosen times. Shared by
the release tool's test modules."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

PYPROJECT = (
    '[build-system]\nrequires = ["setuptools"]\n\n[project]\nname = "x"\nversion = "7"\n\n'
    '[tool.scriptmodule-hook-repro]\ncode-version = "{}"\n\n[tool.other]\nversion = "9"\n'
)


def git(repo: Path, *args: str, when: str = "2026-12-03T10:00:00+00:00") -> str:
    env = {
        **os.environ,
        "GIT_COMMITTER_DATE": when,
        "GIT_AUTHOR_DATE": when,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
    }
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env).stdout


def commit(
    repo: Path, when: str, code: str | None = None, data: dict[str, Any] | None = None, readme: str | None = None
) -> None:
    if code:
        (repo / "pyproject.toml").write_text(PYPROJECT.format(code))
    if data is not None:
        (repo / "repro" / "ledger.json").write_text(json.dumps(data))
    if readme:
        (repo / "README").write_text(readme)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "x", when=when)
