"""The README is checked, not trusted: every option, JSON key, limit and entry point it should list."""

from __future__ import annotations

import re
from dataclasses import fields

import pytest
import tomllib

from helpers import ROOT, run
from repro.catalogue import BUGS
from repro.cli import build_parser as repro_parser
from repro.engine.oracle import OracleRun, ScenarioResult, Side
from repro.engine.scenarios import SCENARIOS
from repro.environment import Environment
from repro.filing.explain import RootCause
from repro.formats.json import as_dict
from repro.ledger import Expectation
from repro.report import build_report
from repro.source_checks import StaticVerdict
from tracker.check_upstream import _as_json
from tracker.check_upstream import build_parser as tracker_parser
from tracker.remote import Limits
from tracker.sweep import Outcome

README = (ROOT / "README.md").read_text(encoding="utf-8")
PROSE = re.sub(r"^```.*?^```", "", README, flags=re.MULTILINE | re.DOTALL)  # without fenced blocks
DOCUMENTED = {span.split()[0] for span in re.findall(r"`([^`]+)`", PROSE)}  # each code span's first word


def _options(parser) -> set[str]:
    return {opt for action in parser._actions for opt in action.option_strings if opt.startswith("--")} - {"--help"}


@pytest.mark.parametrize("parser", [repro_parser, tracker_parser], ids=["repro", "tracker"])
def test_every_option_is_in_the_readme(parser):
    assert _options(parser()) - DOCUMENTED == set()


def test_every_key_of_the_reproducer_json_is_in_the_readme():
    side = Side({"hook calls": []}, None)
    run_ = OracleRun([ScenarioResult(SCENARIOS[0], "script_method", "match", "", side, side)], [], None)
    expected = {bug_id: Expectation("present", "x") for bug_id in BUGS}
    report = build_report(Environment("2.13.0", "3.11", "cpu", "not installed"), run_, expected)
    data = as_dict(report, RootCause("NoneType", False, StaticVerdict("present", [])))
    for keys in (data, data["scenarios"][0], data["bugs"][0]):
        assert set(keys) - DOCUMENTED == set()


def test_every_key_of_the_tracker_json_is_in_the_readme():
    assert set(_as_json(Outcome(), {}, [])) - DOCUMENTED == set()


def test_the_limits_table_states_the_code_defaults():
    for limit in fields(Limits):
        row = next((line for line in README.splitlines() if f"`{limit.metadata['env']}`" in line), "")
        assert f"| {int(limit.default)} (" in row, f"{limit.metadata['env']}: README row {row!r}"


def test_entry_points_and_benchmarks_are_in_the_readme():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    benchmarks = {f"benchmarks/{path.name}" for path in (ROOT / "benchmarks").glob("*.py")}
    assert {name for name in set(scripts) | benchmarks if name not in README} == set()


def test_suite_outside_its_environment_says_what_to_do_in_one_sentence(tmp_path):
    """A shell where the venv is not active: torch missing, as a shadowing package makes it here."""
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text("raise ImportError(\"No module named 'torch'\")\n")
    proc = run(
        ["-m", "pytest", "-p", "no:cacheprovider", str(ROOT / "tests" / "test_ledger.py")],
        env={"PYTHONPATH": f"{tmp_path}:{ROOT}"},
    )
    lines = (proc.stdout + proc.stderr).strip().splitlines()
    assert proc.returncode == 4 and "Traceback" not in proc.stdout + proc.stderr
    assert lines == [
        "Exit: torch cannot be imported: ImportError: No module named 'torch'; activate the "
        "project's environment (. .venv/bin/activate) or create it with the README's set-up command."
    ]
