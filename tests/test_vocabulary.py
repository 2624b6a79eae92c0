"""Every word of the vocabulary reads as its value wherever users see it: printed, formatted, in JSON."""

from __future__ import annotations

import json

import pytest

from repro.vocabulary import FixVerdict, Outcome, ProofStatus, Status, Tier, Verdict

MEMBERS = [member for kind in (Verdict, Status, Outcome, ProofStatus, FixVerdict, Tier) for member in kind]


@pytest.mark.parametrize("member", MEMBERS, ids=lambda m: f"{type(m).__name__}.{m.name}")
def test_a_word_prints_formats_and_serialises_as_its_value(member):
    value = member.value
    assert (str(member), f"{member}", f"{member:>20}", format(member)) == (value, value, f"{value:>20}", value)
    assert json.dumps({"verdict": member}) == json.dumps({"verdict": value})
    assert member == value and type(member)(value) is member


def test_the_ledger_stores_the_vocabularys_words():
    from repro.ledger import OUTCOMES, STATUSES, WORKAROUND_STATUSES

    assert set(STATUSES) == {s.value for s in Status} - {"skipped"}
    assert set(OUTCOMES) == {o.value for o in Outcome} and set(WORKAROUND_STATUSES) == {p.value for p in ProofStatus}
