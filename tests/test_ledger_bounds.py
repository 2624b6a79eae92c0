"""The ledger read with bounds (issue 27, item 6): oversized numbers, deep nesting, malformed support
cells and bug ids that are no ids are one sentence (exit 2), never a traceback or exit 1 ("drift")."""

from __future__ import annotations

import json

import pytest

from repro import cli
from repro.ledger import MAX_DEPTH, LedgerError, load
from tracker import support_doc

RELEASE = {"bugs": {}, "support": {"setattr": "works"}}


def ledger_text(**release_fields) -> str:
    return json.dumps({"schema": 2, "bugs": {}, "releases": {"2.13.0": {**RELEASE, **release_fields}}})


BAD = {
    "huge-integer": ledger_text().replace('"bugs": {}', '"bugs": {}, "n": 1' + "0" * 5000, 1),
    "long-integer": ledger_text().replace('"bugs": {}', '"bugs": {}, "n": 1' + "0" * 30, 1),
    "nan": ledger_text().replace('"bugs": {}', '"bugs": {}, "n": NaN', 1),
    "deep": ledger_text(extra=json.loads("[" * (MAX_DEPTH + 2) + "]" * (MAX_DEPTH + 2))),
    "support-not-object": ledger_text(support=["works"]),
    "support-cell-number": ledger_text(support={"setattr": 3}),
    "support-cell-huge": ledger_text(support={"setattr": "works " * 1000}),
    "bug-id-markup": ledger_text(bugs={"x` <img>": {}}),
    "bug-id-uppercase": json.dumps({"schema": 2, "bugs": {"Full-Backward": {}}, "releases": {}}),
}
SAYS = {
    "huge-integer": "an integer of 5001 digits",
    "long-integer": "an integer of 31 digits",
    "nan": "the number NaN",
    "deep": f"nested deeper than {MAX_DEPTH} levels",
    "support-not-object": "support cells in 2.13.0",
    "support-cell-number": "support cells in 2.13.0",
    "support-cell-huge": "support cells in 2.13.0",
    "bug-id-markup": "that is not an id",
    "bug-id-uppercase": "that is not an id",
}


@pytest.mark.parametrize("name", BAD)
def test_the_reader_refuses_in_one_sentence(tmp_path, name):
    path = tmp_path / "ledger.json"
    path.write_text(BAD[name])
    with pytest.raises(LedgerError) as refused:
        load(path)
    assert SAYS[name] in str(refused.value) and "\n" not in str(refused.value)


@pytest.mark.parametrize("name", ["huge-integer", "support-cell-number", "deep"])
def test_the_cli_and_the_support_page_exit_2_not_1(tmp_path, monkeypatch, capsys, name):
    """Before: a 5000-digit integer made ``python -m repro`` exit 1, which means drift; a cell that is a
    number made the support page raise."""
    path = tmp_path / "ledger.json"
    path.write_text(BAD[name])
    monkeypatch.setenv("REPRO_LEDGER", str(path))
    assert support_doc.main(["--out", str(tmp_path / "page.md")]) == 2
    assert cli.main(["--list-bugs"]) in (0, 2)  # listing needs no ledger; the run below does
    capsys.readouterr()
    assert cli.main(["--bug", "full-backward-hook-flag"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and SAYS[name] in err


def test_the_committed_ledger_is_within_every_bound():
    from repro.ledger import DEFAULT_PATH

    assert load(DEFAULT_PATH)["schema"] == 3
