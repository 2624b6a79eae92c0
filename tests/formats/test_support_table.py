"""The support table: every public nn.Module method covered, each API's outcomes with their conditions,
and the CLI's table within 100 columns, its workarounds as the ledger proved them, one concern per test."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
import torch
from results import DEPARTURES, LOUD_BUGS, SCENARIO, refusal, result

from helpers import expected
from repro import ledger as ledger_io
from repro.catalogue import BUGS
from repro.cli import main
from repro.engine.oracle import ScenarioResult, Side
from repro.engine.scenarios import SCENARIOS, fingerprint, public_module_methods, uncovered_module_methods
from repro.formats.support_table import WIDTH, outcome_of, support_rows
from repro.ledger import PROOF_KEYS, load
from repro.vocabulary import Verdict


def test_every_public_module_method_of_this_torch_has_a_scenario():
    assert public_module_methods() and uncovered_module_methods() == []


def test_a_method_torch_adds_is_reported_uncovered(monkeypatch):
    monkeypatch.setattr(torch.nn.Module, "a_new_public_method", lambda self: None, raising=False)
    assert uncovered_module_methods() == ["a_new_public_method"]


@pytest.mark.parametrize("bug_id", LOUD_BUGS)
def test_a_run_a_loud_patch_refuses_is_that_bugs_code_in_its_scope_or_not_never_works_nor_unexplained(bug_id):
    assert outcome_of(refusal(bug_id)) == (bug_id, f"refused: {bug_id}'s patch")
    assert outcome_of(refusal(bug_id, in_scope=False)) == (bug_id, f"refused: {bug_id}'s patch")
    assert outcome_of(refusal(bug_id, in_scope=False)) == outcome_of(refusal(bug_id))


def test_each_outcome_is_a_code_and_words_naming_the_bug_or_the_source_that_decides_it():
    departed = DEPARTURES["attribute-assignment-forwarded"]
    assert outcome_of(departed) == ("attribute-assignment-forwarded", "raises: attribute-assignment-forwarded")
    raised = result(
        "register_forward_hook: on a submodule (m.linear)",
        "plain_forward",
        "raises",
        "RuntimeError: ... (undocumented: torch/jit/_script.py:1027)",
    )
    assert outcome_of(replace(raised, verdict=Verdict.REFUSED)) == (
        "undocumented",
        "refused undocumented (torch/jit/_script.py:1027)",
    )
    designed = result(
        "children: lists what eager lists, in eager's order",
        "script_method",
        "refused",
        "types: ... (by design: torch/jit/_script.py:711)",
    )
    assert outcome_of(replace(designed, scripted=Side({}, None))) == (
        "design",
        "differs by design (torch/jit/_script.py:711)",  # nothing was refused
    )
    unexplained = replace(departed, detail="RuntimeError: something new", scripted=Side({}, "RuntimeError: new"))
    assert outcome_of(unexplained) == ("unexplained", "raises: unexplained")
    absent = ScenarioResult(
        SCENARIO["cuda: moves every parameter and buffer to the CUDA device"],
        "script_method",
        Verdict.NOT_RUN,
        "not run: no CUDA",
    )
    assert outcome_of(absent) == ("not-run", "not run: no CUDA")


def test_a_cell_lists_codes_in_a_fixed_order_whatever_the_run_order():
    works = result("register_forward_hook: called with input, output; return replaces output", "plain_forward", "match")
    child = DEPARTURES["child-hooks-bypassed"]
    for runs in ([works, child], [child, works]):
        (row,) = support_rows(runs)
        assert row.codes == ("ok", "child-hooks-bypassed")


def test_a_condition_names_exactly_what_ran_and_narrows_when_a_shape_is_added():
    works = result("register_forward_hook: called with input, output; return replaces output", "script_method", "match")
    child = DEPARTURES["child-hooks-bypassed"]
    plain_child = result(child.scenario.key, "plain_forward", "match")
    (row,) = support_rows([works, result(works.scenario.key, "plain_forward", "match"), child, plain_child])
    assert row.api == "register_forward_hook"
    assert row.cell == (  # the API ran on two shapes: each outcome names its own
        "works (called with input, output; return replaces output, on flat · on a ScriptModule-subclass child, "
        "with a plain forward, on subclass child); differs: child-hooks-bypassed (on a ScriptModule-subclass "
        "child, with @script_method, on subclass child)"
    )
    # The same scenario also run on a shape where it works: the bug's condition narrows to the shape it ran on.
    eager_parent = child.scenario.on("in eager parent")
    also = [replace(plain_child, scenario=eager_parent), replace(works, scenario=eager_parent)]
    (row,) = support_rows([works, child, plain_child, *also])
    bypassed = next(o for o in row.outcomes if o.code == "child-hooks-bypassed")
    assert bypassed.where == ("on a ScriptModule-subclass child, with @script_method, on subclass child",)
    (alone,) = support_rows([child, plain_child])  # one scenario on one shape: nothing more to name
    assert alone.cell == "works (with a plain forward); differs: child-hooks-bypassed (with @script_method)"


PROOF = {"id": "copy-shares-training", "status": "works", "workaround": "w", "runs": 2, "matched": 2, "summary": "s"}


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    """``python -m repro ARGS`` in this process: (exit code, stdout, stderr)."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow  # the whole table measured in this process: 8 s of CPU, past the quick suite's budget
@pytest.mark.usefixtures("measured_once")
def test_the_cli_table_covers_every_api_within_100_columns(capsys):
    code, out, _ = _cli(capsys, "--support-table")
    assert code == 0
    assert [line for line in out.splitlines() if len(line) > WIDTH] == []
    code, out, _ = _cli(capsys, "--support-table", "--json")
    rows = json.loads(out)["rows"]
    assert code == 0 and {row["api"] for row in rows} == {s.api for s in SCENARIOS}
    assert set(public_module_methods()) <= {api for s in SCENARIOS for api in s.apis}
    cells = " ".join(row["cell"] for row in rows)
    assert "unexplained" not in cells and "eager fails" not in cells  # every departure attributed
    for bug_id in BUGS:  # each bug the ledger expects on this torch shows in some row
        assert bug_id in cells or expected(bug_id).outcome != "present"


@pytest.mark.slow  # the same measurement as the test above
@pytest.mark.usefixtures("measured_once")
def test_the_cli_table_says_what_the_ledger_proved_without_proving_it(capsys, tmp_path, monkeypatch):
    import torch

    stored = {k: PROOF[k] for k in PROOF_KEYS} | {"table": fingerprint(), "device": "cpu"}
    ledger = load(ledger_io.ledger_path())
    key = ledger_io.release_key(torch.__version__)
    entry = ledger["releases"].setdefault(key, {"bugs": {}})
    for bug_id, bug in BUGS.items():
        named = {"workaround": bug.workaround.name if bug.workaround else "none"}
        entry["bugs"].setdefault(bug_id, {})["workaround"] = stored | named | {"status": "does-not-work"}
    path = tmp_path / "ledger.json"
    path.write_text(json.dumps(ledger))
    monkeypatch.setenv("REPRO_LEDGER", str(path))
    monkeypatch.setattr("repro.proof.prove", lambda *a: pytest.fail("--support-table proved a workaround"))
    assert main(["--support-table", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    bugs = [o for row in rows for o in row["outcomes"] if o["code"] in BUGS]
    assert bugs
    assert [o for o in bugs if o["workaround"]["status"] != "does-not-work"] == []
    # the measured cell, as the ledger stores it
    assert [(row["api"], row["cell"]) for row in rows if "workaround" in row["cell"]] == []
    assert [
        (row["api"], o["code"]) for row in rows for o in row["outcomes"] if o["code"] not in BUGS and "workaround" in o
    ] == []


def test_the_support_table_takes_no_other_mode(capsys):
    code, out, err = _cli(capsys, "--support-table", "--bug", "checkpoint-early-stop")
    assert (code, out) == (2, "") and "--support-table runs every scenario" in err
