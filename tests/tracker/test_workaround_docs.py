"""docs/downstream.md's proof paragraphs (tracker/workaround_docs.py): the proof as the ledger records
it, and the same workaround's verdict on generated models where the explorer recorded one for it."""

from __future__ import annotations

from tracker.workaround_docs import proof_paragraph

PROOF = {
    "status": "works",
    "workaround": "repro.workaround.deepcopy",
    "runs": 9,
    "matched": 9,
    "summary": "9 of 9 calls match eager",
    "verdict": "holds",
    "space": "calls 1-3",
}


def flat(text: str) -> str:
    return " ".join(text.split())


def test_a_proof_paragraph_adds_the_verdict_on_generated_models_of_the_same_workaround_only():
    explored = {"workaround": PROOF["workaround"], "verdict": "silently wrong", "space": "40 generated models"}
    said = "On generated models (`python -m repro --explore --workarounds`): silently wrong on 40 generated models."
    assert said in flat(proof_paragraph("2.13.0", PROOF, explored))
    for other in (None, {**explored, "workaround": "an earlier workaround"}):
        assert "generated" not in proof_paragraph("2.13.0", PROOF, other)
    assert all(len(line) <= 100 for line in proof_paragraph("2.13.0", PROOF, explored).splitlines())
