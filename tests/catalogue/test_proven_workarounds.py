"""Each workaround's proof recorded per release and read back by ``--support-table``: a status says
"works" only where a run showed it working and none departs, the tracker keeps only well-formed
proofs, and the table names each bug's workaround as the ledger proved it, never by running it."""

from __future__ import annotations

import contextlib
import json
from dataclasses import replace
from typing import Any

import pytest

from helpers import proof_of
from repro import ledger as ledger_io
from repro import proof as proof_module
from repro.catalogue import BUGS
from repro.cli import main
from repro.engine import oracle
from repro.engine.scenarios import fingerprint
from repro.formats.support_table import WIDTH, Outcome, Proven, SupportRow, annotated, proven, render
from repro.ledger import PROOF_KEYS, WORKAROUND_STATUSES, LedgerError, load
from repro.proof import Proof, prove
from repro.vocabulary import Verdict
from tracker import history, sweep
from tracker.confirm import Measurement, ReportError, read_workarounds


def _broken(bug_id: str, **changes: Any) -> Proof:
    """The bug's proof with its workaround changed (a broken fix must never read as one that works)."""
    bug = BUGS[bug_id]
    assert bug.workaround is not None
    return prove(replace(bug, workaround=replace(bug.workaround, **changes)))


def _unrunnable(bug_id: str) -> Proof:
    """The bug's real proof as a torch lacking every API of its scope would give it."""
    proof = proof_of(bug_id)
    return Proof(proof.bug, [replace(r, verdict=Verdict.UNAVAILABLE, scripted=None, eager=None) for r in proof.results])


@pytest.mark.parametrize(
    ("make", "status"),
    [
        (lambda: proof_of("jit-error-replaces-exception"), "works"),
        pytest.param(lambda: proof_of("global-hooks-root-only"), "works-with-limits", marks=pytest.mark.slow),
        pytest.param(  # nothing in force departs only where the bug shows
            lambda: _broken("jit-error-replaces-exception", apply=contextlib.nullcontext, style=""),
            "does-not-work",
            marks=pytest.mark.needs_bug("jit-error-replaces-exception"),
        ),
        pytest.param(  # the style is the workaround
            lambda: _broken("child-hooks-bypassed", style=""), "does-not-work", marks=pytest.mark.slow
        ),
        pytest.param(  # a limit undeclared departs
            lambda: _broken("global-hooks-root-only", limits=()), "does-not-work", marks=pytest.mark.slow
        ),
        (lambda: _unrunnable("jit-error-replaces-exception"), "not-measured"),
        pytest.param(lambda: proof_of("quantize-dynamic-skips-subclass"), "none", marks=pytest.mark.slow),  # 1 s
    ],
    ids=["works", "with-limits", "nothing-in-force", "style-dropped", "limits-dropped", "unrunnable", "none"],
)
def test_a_proof_says_works_only_where_a_run_showed_it_and_none_departs(make, status):
    proof = make()
    assert proof.status == status and status in WORKAROUND_STATUSES
    assert proof.works == status.startswith("works")
    recorded = proof.as_dict()
    assert recorded["status"] == status and ledger_io.valid_proof({k: recorded[k] for k in PROOF_KEYS})


def _missing_switch() -> contextlib.AbstractContextManager[None]:
    from torch.utils.checkpoint import no_such_switch  # type: ignore[attr-defined]  # as 1.13.1 lacks one

    return no_such_switch(False)


def test_a_workaround_this_torch_cannot_apply_is_not_measured_never_an_error():
    """torch 1.13.1 has no ``set_checkpoint_early_stop``: the proof says so and runs nothing."""
    proof = _broken("checkpoint-early-stop", apply=_missing_switch)
    assert (proof.status, proof.results, proof.works) == ("not-measured", [], False)
    assert proof.summary().startswith("not measured: this torch cannot apply it (ImportError: cannot import name")
    recorded = proof.as_dict()
    assert ledger_io.valid_proof({k: recorded[k] for k in PROOF_KEYS})


@pytest.mark.slow  # a proof of 63 runs
def test_a_difference_only_by_design_counts_as_observed_but_a_refusal_does_not():
    """Global backward hooks on shapes with compiled children: every run differs from eager only in
    the child's class (cited), which shows the hooks ran as eager's; a refused call shows nothing."""
    proof = proof_of("global-backward-hooks-scripted")
    assert proof.results and proof.observed() == proof.results and proof.status == "works"
    refused = [
        replace(r, scripted=oracle.Side(r.scripted.observation if r.scripted else {}, "refused")) for r in proof.results
    ]
    assert Proof(proof.bug, refused).status == "not-measured"


def _proofs_report(capsys, *bug_ids: str) -> str:
    code = main(["--workarounds", "--json", *(a for b in bug_ids for a in ("--bug", b))])
    out, _ = capsys.readouterr()
    assert code == 0
    return out


def test_a_proof_observes_each_scenarios_eager_twin_once_per_size_for_all_its_runs(monkeypatch):
    """As the report does: the twin is plain ``nn.Module`` code, its calls the same for each run."""
    observed: list[tuple[str, str]] = []
    eager_calls = proof_module.eager_calls

    def counted(scenario: Any, device: str, size: Any) -> Any:
        observed.append((scenario.key, str(size)))
        return eager_calls(scenario, device, size)

    monkeypatch.setattr(proof_module, "eager_calls", counted)
    proof = prove(BUGS["autocast-compiled-float32"])
    runs = [
        (r.scenario.key, str(r.size)) for r in proof.results if r.verdict not in (Verdict.UNAVAILABLE, Verdict.NOT_RUN)
    ]
    assert proof.works and sorted(observed) == sorted(set(runs)) and len(runs) > len(observed)


@pytest.mark.slow  # two proofs through the CLI (1.6 s)
def test_the_tracker_records_each_proof_with_its_scenario_table_and_device(capsys, tmp_path):
    stdout = _proofs_report(capsys, "jit-error-replaces-exception", "quantize-dynamic-skips-subclass")
    proofs = read_workarounds(stdout, "")
    proven = proofs["jit-error-replaces-exception"]
    assert proven["status"] == "works" and proven["workaround"] == "a plain forward"
    assert proven["matched"] > 0 and proven["summary"].startswith(f"{proven['matched']} of {proven['runs']} calls")
    assert proven["verdict"] == "holds" and proofs["quantize-dynamic-skips-subclass"].get("verdict") == ""
    assert (proven["table"], proven["device"]) == (fingerprint(), "cpu")
    assert proven["space"].startswith("calls 1-3 of a first and a later instance") and "torch 2." in proven["space"]
    assert proofs["quantize-dynamic-skips-subclass"]["status"] == "none"
    ledger = tmp_path / "ledger.json"
    ledger.write_text(json.dumps(ledger_io.new_ledger()))
    verdict = {"verdict": "present", "detail": "d", "checked_at": "2026-12-03T00:00:00+00:00"}
    asked = {"jit-error-replaces-exception": verdict}  # --bug jit-error-replaces-exception: only its proof is recorded
    sweep.record(ledger, "2.13.0", sweep._record_dynamic(asked, Measurement({}, {}, proofs)))
    bugs = load(ledger)["releases"]["2.13.0"]["bugs"]
    assert bugs["jit-error-replaces-exception"]["workaround"] == proofs["jit-error-replaces-exception"]
    assert "quantize-dynamic-skips-subclass" not in bugs


GOOD = {"id": "copy-shares-training", "status": "works", "workaround": "w", "runs": 2, "matched": 2, "summary": "s"}


@pytest.mark.parametrize(
    "entry",
    [
        {**GOOD, "status": "fixed"},
        {**GOOD, "status": None},
        {**GOOD, "matched": 3},
        {**GOOD, "runs": -1},
        {**GOOD, "runs": True},
        {**GOOD, "summary": "x" * (ledger_io.TEXT_CAP + 1)},
        {**GOOD, "workaround": ["a"]},
        {k: v for k, v in GOOD.items() if k != "summary"},
        {**GOOD, "id": 7},
        "works",
    ],
    ids=["status", "no-status", "matched>runs", "negative", "bool", "long", "list", "missing", "id", "not-object"],
)
def test_a_proof_that_is_not_one_is_left_out(entry):
    stdout = json.dumps({"scenario_table": "abc", "device": "cpu", "workarounds": [entry, GOOD]})
    assert list(read_workarounds(stdout, "")) == ["copy-shares-training"]
    assert read_workarounds(stdout, "")["copy-shares-training"]["status"] == "works"  # the good one, not a bad


@pytest.mark.parametrize(
    ("stdout", "says"),
    [
        ("", "proving the workarounds printed no report: Killed"),
        ("[]", "not a report with a list of proofs"),
        ('{"workarounds": {}}', "not a report with a list of proofs"),
    ],
)
def test_a_proofs_run_without_a_report_is_an_error_never_a_status(stdout, says):
    with pytest.raises(ReportError, match=says):
        read_workarounds(stdout, "Killed\n")


@pytest.mark.parametrize(
    "proof",
    [
        {**{k: GOOD[k] for k in PROOF_KEYS}, "status": "maybe"},
        {**{k: GOOD[k] for k in PROOF_KEYS}, "device": "CUDA:0"},
        {**{k: GOOD[k] for k in PROOF_KEYS}, "extra": 1},
        "works",
    ],
    ids=["status", "device", "extra-key", "string"],
)
def test_a_ledger_with_a_malformed_proof_is_refused_in_one_sentence(tmp_path, proof):
    path = tmp_path / "ledger.json"
    path.write_text(
        json.dumps({"schema": 3, "bugs": {}, "releases": {"2.13.0": {"bugs": {"x": {"workaround": proof}}}}})
    )
    with pytest.raises(LedgerError, match=r"^the ledger .* has a workaround proof for x in 2\.13\.0 that is not "):
        load(path)


def _entry(table: str, **proof: object) -> dict:
    stored = {k: GOOD[k] for k in PROOF_KEYS} | {"workaround": "repro.workaround.shallow_copy", "table": table}
    return {"bugs": {"copy-shares-training": {"workaround": stored | proof}}}


@pytest.mark.parametrize(
    ("entry", "device", "words"),
    [
        (_entry("T"), "cpu", "works with workaround repro.workaround.shallow_copy"),
        (_entry("T"), "cuda:0", "works with workaround repro.workaround.shallow_copy (proven on cpu)"),
        (_entry("T", device="npu"), "npu", "works with workaround repro.workaround.shallow_copy"),
        (
            _entry("T", status="works-with-limits"),
            "cpu",
            "works with workaround repro.workaround.shallow_copy, with limits",
        ),
        (_entry("T", status="does-not-work"), "cpu", "workaround repro.workaround.shallow_copy does not work"),
        (_entry("T", status="not-measured"), "cpu", "workaround not measured"),
        (_entry("T", status="none"), "cpu", "no workaround"),
        (_entry("an older table"), "cpu", "workaround not proven on this release"),
        (_entry("T", workaround="the one named before"), "cpu", "workaround not proven on this release"),
        ({}, "cpu", "workaround not proven on this release"),
    ],
    ids=[
        "works",
        "other-device",
        "same-device",
        "limits",
        "broken",
        "unmeasured",
        "none",
        "other-table",
        "other-workaround",
        "no-proof",
    ],
)
def test_the_table_names_each_bugs_workaround_as_the_ledger_proved_it(entry, device, words):
    found = proven(entry, "T", device)
    assert set(found) == set(BUGS) and found["copy-shares-training"].words == words
    row = SupportRow(
        "copy.copy",
        (
            Outcome("ok", "works", ("on flat",)),
            Outcome("copy-shares-training", "differs: copy-shares-training", ("on child",)),
        ),
    )
    assert annotated(row, found) == f"works (on flat); differs: copy-shares-training [{words}] (on child)"
    assert row.cell == "works (on flat); differs: copy-shares-training (on child)"  # what the ledger stores


def test_the_rendered_table_fits_100_columns_with_every_workaround_named():
    from repro.environment import Environment

    long_name = Proven("a plain forward (and allow_global_backward_hooks)", "works-with-limits", "cuda")
    row = SupportRow("register_forward_hook", (Outcome("global-hooks-root-only", "differs: global-hooks-root-only"),))
    environment = Environment("2.13.0", "3.11", "cpu", "")
    text = render(environment, [row], {"global-hooks-root-only": long_name})
    assert [line for line in text.splitlines() if len(line) > WIDTH] == []
    assert "allow_global_backward_hooks), with limits (proven on cuda)]" in " ".join(
        line.strip("| ").strip() for line in text.splitlines()
    )


def test_every_workaround_has_a_short_name_a_cell_can_carry():
    for bug in BUGS.values():
        assert bug.workaround is not None and 0 < len(bug.workaround.name) <= 60
        assert (bug.workaround.name == "none") == (bug.workaround.apply is None), bug.id


def _ledger(**proofs: str) -> dict:
    """A ledger whose releases (keys) hold a proof with that status for one bug."""
    releases = {
        version: {"bugs": {"copy-shares-training": {"workaround": {"status": found}}}}
        for version, found in proofs.items()
    }
    return {"schema": 3, "bugs": {}, "releases": releases}


@pytest.mark.parametrize(
    ("before", "after", "said"),
    [
        (
            _ledger(v2_13_0="works"),
            _ledger(v2_13_0="works", v2_14_0="does-not-work"),
            "2.14.0: workaround works -> does-not-work",
        ),
        (_ledger(v2_13_0="works"), _ledger(v2_13_0="does-not-work"), "2.13.0: workaround works -> does-not-work"),
        (
            _ledger(v2_13_0="does-not-work"),
            _ledger(v2_13_0="does-not-work", v2_14_0="works"),
            "2.14.0: workaround does-not-work -> works",
        ),
        (_ledger(v2_13_0="works"), _ledger(v2_13_0="works", v2_14_0="works"), None),
        (_ledger(), _ledger(v2_14_0="does-not-work"), None),  # nothing proven before: nothing changed
    ],
    ids=["new-release-breaks", "re-measured", "new-release-mends", "same", "first-proof"],
)
def test_a_workarounds_proof_that_changes_is_a_change_for_its_bug(before, after, said):
    def keyed(ledger: dict) -> dict:
        return {**ledger, "releases": {k[1:].replace("_", "."): v for k, v in ledger["releases"].items()}}

    before, after = keyed(before), keyed(after)
    measured = {v: e for v, e in after["releases"].items() if e != before["releases"].get(v)}
    found = history.changes(before, after, measured)
    assert [str(change) for change in found] == ([f"copy-shares-training: {said}"] if said else [])
