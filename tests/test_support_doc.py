"""docs/support-table.md from the ledger's measured cells: codes, tables within 100 columns, the newest
release in full."""

from __future__ import annotations

import json

from repro.catalogue import BUGS
from tracker import support_doc
from tracker.support_doc import BUG_CODES, code, document, measured

CELLS = {
    "setattr": "works; raises: attribute-assignment-forwarded (a parameter to None, a buffer to None); refused by "
    "design (torch/jit/_script.py:269) (a child to a new eager module)",
    "copy.copy": "works",
    "torch.nn.utils.parametrize.register_parametrization": "refused by design (torch/jit/_script.py:216)",
    "mtia": "unavailable",
    "cuda": "not run: no CUDA",
}


def test_a_cell_becomes_short_codes_in_its_order():
    assert code(CELLS["setattr"]) == f"ok/{BUG_CODES['attribute-assignment-forwarded']}/D"
    assert [code(CELLS[api]) for api in ("copy.copy", "mtia", "cuda")] == ["ok", "-", "n/r"]
    assert code("differs: no catalogued bug explains it") == "?"


def test_the_document_lists_every_release_within_100_columns():
    releases = {f"2.{minor}.0": dict(CELLS) for minor in range(0, 16)}
    text = document(releases, "2026-12-03")
    lines = text.splitlines()
    assert all(len(line) <= 100 for line in lines), max(lines, key=len)
    assert all(f" {version} " in text for version in releases)  # every release has a column somewhere
    assert "## torch 2.15.0 in full" in text and "Regenerated on 2026-12-03" in text
    assert all(f"`{BUG_CODES[b]}`: {b}: " in text for b in BUGS)


def test_the_cli_writes_from_the_ledger_and_refuses_one_without_measurements(tmp_path, monkeypatch, capsys):
    ledger = tmp_path / "ledger.json"
    ledger.write_text(
        json.dumps(
            {
                "schema": 2,
                "bugs": {},
                "releases": {"2.14.0": {"support": CELLS}, "2.13.0": {"support": CELLS}, "2.12.0": {}},
            }
        )
    )
    monkeypatch.setenv("REPRO_LEDGER", str(ledger))
    assert list(measured(json.loads(ledger.read_text()))) == ["2.13.0", "2.14.0"]
    out = tmp_path / "support-table.md"
    assert support_doc.main(["--out", str(out)]) == 0 and "## torch 2.14.0 in full" in out.read_text()
    ledger.write_text(json.dumps({"schema": 2, "bugs": {}, "releases": {}}))
    assert support_doc.main(["--out", str(out)]) == 2
    assert "holds no measured support table" in capsys.readouterr().err
