"""The repro-matrix workflow's module: pairs planned from a loopback index's wheel tags, a real run's
result, and the table gathered from results, including runs that produced no report."""

from __future__ import annotations

import json
import re

import pytest
import torch

from helpers import ROOT, run
from repro.catalogue import BUGS

WORKFLOW = ROOT / ".github" / "workflows" / "repro-matrix.yml"
LINUX = "manylinux_2_28_x86_64"
WHEELS = {  # per release, the CPython versions it has Linux x86-64 wheels for (and a macOS one to ignore)
    "1.13.1": ["37", "38", "39", "310", "311"],
    "2.0.0": ["38", "39", "310", "311"],
    "2.15.0": ["310", "311", "312", "313", "314"],
    "2.16.0rc1": ["310", "311", "312", "313", "314", "315"],
}


def planned(index, *args: str) -> tuple[int, list[dict], str]:
    for version, pythons in WHEELS.items():
        for cp in pythons:
            index.wheels[f"torch-{version}-cp{cp}-cp{cp}-{LINUX}.whl"] = b"wheel"
        index.wheels[f"torch-{version}-cp39-none-macosx_11_0_arm64.whl"] = b"wheel"
    proc = run(["-m", "tracker.matrix", "plan", "--index-url", index.url, *args])
    matrix = json.loads(proc.stdout)["include"] if proc.returncode == 0 else []
    return proc.returncode, matrix, proc.stderr


def test_the_workflows_plan_runs_only_pairs_torch_has_wheels_for(index):
    line = next(line for line in WORKFLOW.read_text().splitlines() if "tracker.matrix plan" in line)
    asked = re.search(r"plan (.*?)\)", line).group(1).split()  # the workflow's own --torch and --python
    code, matrix, _ = planned(index, *asked)
    assert code == 0
    assert [(p["torch"], p["python"]) for p in matrix] == [
        ("1.13.1", "3.10"), ("1.13.1", "3.11"), ("2.0.0", "3.10"), ("2.0.0", "3.11"),
        *(("2.15.0", f"3.{minor}") for minor in range(10, 15))]  # newest: the latest stable, not 2.16.0rc1


def test_a_release_the_index_does_not_list_is_one_sentence(index):
    code, _, stderr = planned(index, "--torch", "1.13.2", "--python", "3.11")
    assert code == 1 and stderr.strip() == "matrix: error: the index does not list torch 1.13.2"


@pytest.mark.slow
def test_a_run_records_its_report_and_the_table_shows_each_bug_and_what_was_said(tmp_path):
    result = tmp_path / "results" / "installed.json"
    proc = run(["-m", "tracker.matrix", "run", "--torch", torch.__version__, "--out", str(result)],
               env={"PYTORCH_JIT": "0"})  # TorchScript off: a quick run that still reports
    assert proc.returncode == 0, proc.stderr
    recorded = json.loads(result.read_text())
    assert recorded["exit_code"] == 2 and recorded["report"]["outcome"] == "cannot-test"
    (tmp_path / "results" / "crashed.json").write_text(json.dumps({
        "torch": "1.13.1", "python": "3.10", "exit_code": 1, "report": None,
        "stderr": ["Traceback (most recent call last):", "ImportError: libtorch_cpu.so: cannot open"]}))
    (tmp_path / "results" / "truncated.json").write_text("{")
    table = run(["-m", "tracker.matrix", "table", str(tmp_path / "results")])
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert lines[0] == "| torch | Python | exit | outcome | " + " | ".join(sorted(BUGS)) + " | notes |"
    rows = {line.split(" | ")[0].lstrip("| "): line for line in lines[2:]}
    assert rows["1.13.1"].endswith("| no report | - | - | - | - | ImportError: libtorch_cpu.so: cannot open |")
    installed = rows[torch.__version__]
    assert "| 2 | cannot-test | " in installed and "TorchScript is disabled (PYTORCH_JIT=0?)" in installed
    assert "truncated.json is not a result file of `python -m tracker.matrix run`" in rows["truncated"]
