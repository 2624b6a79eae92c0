"""The repro-matrix workflow's module: pairs planned from a loopback index's wheel tags, a real run's
result, and the table gathered from results, including runs that produced no report."""

from __future__ import annotations

import json
import re
import time

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
    found = re.search(r"plan (.*?)\)", line)
    assert found, line
    asked = found.group(1).split()  # the workflow's own --torch and --python
    code, matrix, _ = planned(index, *asked)
    assert code == 0
    assert [(p["torch"], p["python"]) for p in matrix] == [
        ("1.13.1", "3.10"),
        ("1.13.1", "3.11"),
        ("2.0.0", "3.10"),
        ("2.0.0", "3.11"),
        *(("2.15.0", f"3.{minor}") for minor in range(10, 15)),
    ]  # newest: the latest stable, not 2.16.0rc1


def test_a_release_the_index_does_not_list_is_one_sentence(index):
    code, _, stderr = planned(index, "--torch", "1.13.2", "--python", "3.11")
    assert code == 1 and stderr.strip() == "matrix: error: the index does not list torch 1.13.2"


@pytest.mark.parametrize("out", ["missing/result.json", "/proc/result.json"])
def test_run_refuses_an_unwritable_out_before_any_work(tmp_path, out):
    target = tmp_path / out if not out.startswith("/") else out
    start = time.monotonic()
    proc = run(["-m", "tracker.matrix", "run", "--torch", "2.13.0", "--out", str(target)])
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith(f"matrix: error: {target} cannot be written: ")
    assert len(proc.stderr.splitlines()) == 1 and time.monotonic() - start < 5  # the run takes 13 s
    assert not (tmp_path / "missing").exists()


@pytest.mark.slow
def test_a_run_records_its_report_and_the_table_shows_each_bug_and_what_was_said(tmp_path):
    result = tmp_path / "results" / "installed.json"
    result.parent.mkdir()
    proc = run(
        ["-m", "tracker.matrix", "run", "--torch", torch.__version__, "--out", str(result)], env={"PYTORCH_JIT": "0"}
    )  # TorchScript off: a quick run that still reports
    assert proc.returncode == 0, proc.stderr
    recorded = json.loads(result.read_text())
    assert recorded["exit_code"] == 2 and recorded["report"]["outcome"] == "cannot-test"
    (tmp_path / "results" / "crashed.json").write_text(
        json.dumps(
            {
                "torch": "1.13.1",
                "python": "3.10",
                "exit_code": 1,
                "report": None,
                "stderr": ["Traceback (most recent call last):", "ImportError: libtorch_cpu.so: cannot open"],
            }
        )
    )
    (tmp_path / "results" / "truncated.json").write_text("{")
    table = run(["-m", "tracker.matrix", "table", str(tmp_path / "results")])
    assert table.returncode == 1, table.stderr  # truncated.json is malformed: its row says so, the others stay
    lines = table.stdout.splitlines()
    assert lines[0] == "| torch | Python | exit | outcome | " + " | ".join(sorted(BUGS)) + " | notes |"
    rows = {line.split(" | ")[0].lstrip("| "): line for line in lines[2:]}
    no_status = "| \\- " * len(BUGS)  # one cell per catalogued bug ("-" escaped: it could start a list)
    assert rows["1.13.1"].endswith(f"| no report {no_status}| `ImportError: libtorch_cpu.so: cannot open` |")
    installed = rows[torch.__version__]
    assert "| 2 | cannot-test | " in installed and "TorchScript is disabled (PYTORCH_JIT=0?)" in installed
    assert "truncated.json is not a result file of \\`python -m tracker.matrix run\\` (not JSON)" in rows["truncated"]


GOOD = {
    "torch": "2.13.0",
    "python": "3.11",
    "exit_code": 0,
    "stderr": [],
    "report": {
        "torch_version": "2.13.0",
        "outcome": "as-expected",
        "warnings": [],
        "bugs": [{"id": "full-backward-hook-flag", "status": "present"}],
    },
}


def _with(path: str, value) -> dict:
    """GOOD with the field at ``path`` (dotted; a number indexes a list) replaced by ``value``."""
    result = json.loads(json.dumps(GOOD))
    *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
    target = result
    for part in parents:
        target = target[part]
    target[last] = value
    return result


def table_of(tmp_path, capsys, files: dict[str, object]) -> tuple[int, dict[str, str]]:
    """``matrix table`` over result files (a str is written as is): its exit code and rows by first cell."""
    from tracker.matrix import main

    folder = tmp_path / "results"
    folder.mkdir()
    for name, content in files.items():
        (folder / name).write_text(content if isinstance(content, str) else json.dumps(content))
    code = main(["table", str(folder)])
    lines = capsys.readouterr().out.splitlines()
    return code, {line.split(" | ")[0].lstrip("| "): line for line in lines[2:]}


@pytest.mark.parametrize(
    "content, said",
    [
        (_with("python", 3.11), "has 'python' that is not a string: 3.11"),
        (_with("torch", None), "has 'torch' that is not a string: null"),
        (_with("exit_code", "0"), "has 'exit_code' that is not a number"),
        (_with("report", [1]), "has 'report' that is not an object: [1]"),
        (_with("report.bugs", "abc"), "has report.bugs that is not a list"),
        (
            _with("report.bugs.0", {"id": "full-backward-hook-flag"}),
            "has a bug in report.bugs without a string 'id' and 'status'",
        ),
        (_with("report.bugs.0", "present"), "has a bug in report.bugs without a string 'id'"),
        (_with("report.warnings", "careful"), "has report.warnings that is not a list of strings"),
        (_with("report.outcome", 3), "has report.outcome that is not a string"),
        (_with("stderr", "one line of stderr"), "has 'stderr' that is not a list of lines"),
        (_with("stderr", [1, 2]), "has 'stderr' that is not a list of lines"),
        ([GOOD], "is not a JSON object"),
        ({k: v for k, v in GOOD.items() if k != "exit_code"}, "has no 'exit_code'"),
        ("{", "is not a result file of `python -m tracker.matrix run` (not JSON)"),
        ("[" * 100_000, "is not a result file of `python -m tracker.matrix run` (not JSON)"),
    ],
    ids=[
        "python-number",
        "torch-null",
        "exit-string",
        "report-list",
        "bugs-string",
        "bug-without-status",
        "bug-string",
        "warnings-string",
        "outcome-number",
        "stderr-string",
        "stderr-numbers",
        "top-list",
        "no-exit-code",
        "truncated",
        "nested-deeply",
    ],
)
def test_a_malformed_result_is_a_row_saying_what_is_wrong_and_the_others_stay(tmp_path, capsys, content, said):
    code, rows = table_of(tmp_path, capsys, {"good.json": GOOD, "bad.json": content})
    assert code == 1 and set(rows) == {"2.13.0", "bad"}
    assert "| as-expected | present |" in rows["2.13.0"]
    expected = f"bad.json {said}".replace("_", "\\_").replace("[", "\\[").replace("]", "\\]")
    assert expected.replace("`", "\\`") in rows["bad"].replace("\\|", "|"), rows["bad"]
    assert rows["bad"].count(" | ") == rows["2.13.0"].count(" | ")  # the same columns


HOSTILE_NOTES = ["a | b", "``` fenced", "<img src=//e.x/p>", "@octocat", "\x1b[2J\x1b[32mall good", "x\ny"]


@pytest.mark.parametrize("said", HOSTILE_NOTES)
@pytest.mark.parametrize("where", ["stderr", "warnings"])
def test_what_a_run_said_is_inert_in_the_table(tmp_path, capsys, said, where):
    from inert_markdown import assert_inert_markdown

    result = _with("report.warnings", [said]) if where == "warnings" else {**_with("report", None), "stderr": [said]}
    code, rows = table_of(tmp_path, capsys, {"run.json": result})
    assert code == 0 and len(rows) == 1
    row = next(iter(rows.values()))
    assert_inert_markdown(row, columns=5 + (where == "warnings"))  # a bug column where there is a report


def test_newest_is_resolved_per_python_past_yanked_and_wheel_less_releases(index):
    """Newer than 2.15.0: 2.15.1 fully yanked, 2.16.0 with macOS wheels only, 2.15.2 for Python 3.14 only."""
    for cp in WHEELS["2.15.0"]:
        index.wheels[f"torch-2.15.1-cp{cp}-cp{cp}-{LINUX}.whl"] = b"wheel"
        index.yanked.add(f"torch-2.15.1-cp{cp}-cp{cp}-{LINUX}.whl")
    index.wheels["torch-2.16.0-cp313-none-macosx_11_0_arm64.whl"] = b"wheel"
    index.wheels[f"torch-2.15.2-cp314-cp314-{LINUX}.whl"] = b"wheel"
    code, matrix, stderr = planned(index, "--torch", "newest", "--python", "3.10,3.14")
    assert code == 0, stderr
    assert [(p["torch"], p["python"]) for p in matrix] == [("2.15.0", "3.10"), ("2.15.2", "3.14")]


@pytest.mark.parametrize("asked", [["--torch", "newest", "--python", "3.6"], ["--torch", "2.0.0", "--python", "3.14"]])
def test_a_plan_with_no_pair_is_one_sentence_not_an_empty_matrix(index, asked):
    code, matrix, stderr = planned(index, *asked)
    assert code == 1 and matrix == [] and len(stderr.strip().splitlines()) == 1
    assert stderr.startswith("matrix: error: no release asked for") and "the matrix would be empty" in stderr


def test_the_table_adds_each_pairs_support_cells_as_codes_and_keeps_outside_names_inert(tmp_path):
    from tracker.matrix import support_section

    cells = {
        "setattr": "ok/attribute-assignment-forwarded",
        "`<img src=x>`@octocat": "ok",
        "forward": "ok/<b>bold</b>",
    }
    results = [{"torch": "2.13.0", "python": "3.11", "exit_code": 0, "report": None, "stderr": [], "support": cells}]
    lines = support_section(results).splitlines()
    assert any(line.startswith("| `setattr`") and "ok/attribute-assignment-forwarded" in line for line in lines), lines
    assert any(line.startswith("| `forward`") and "ok/?" in line for line in lines), lines  # not one of our codes
    assert "<img" not in "\n".join(lines) and "<b>" not in "\n".join(lines)
    assert any("(not an API name)" in line for line in lines), lines
    assert support_section([{**results[0], "support": {}}]) == ""
