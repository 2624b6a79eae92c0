"""docs/support-table.md is outside text made inert (issue 27): ledger cells and API names render as
literal text on GitHub, and the page is replaced in one rename or left as it was."""

from __future__ import annotations

import json

import pytest
from markdown_render import blocks, live, render, table_widths, unseen

from helpers import file_size_limit
from tracker import support_doc
from tracker.support_doc import columns, document

HOSTILE_CELL = (
    "works`\n![x](https://e.x/p.png)\n# Heading\n[click](javascript:alert(1)) <img src=x> "
    "a | b || c \x1b[2J\u202eevil\u2066 \udc9b https://e.x/bare www.e.x @octocat"
)
HOSTILE_API = "evil` <b>x</b> | [y](javascript:z) \x1b]8;;\x07"


def rows(cells: dict[str, str]) -> dict:
    """A schema-3 support column whose cells are ``cells`` (each coded as departing: ``unexplained``)."""
    return {
        "cpu": {
            "python": "3.11.7",
            "platform": "linux-x86_64",
            "rows": {api: {"codes": ["unexplained"], "cell": text} for api, text in cells.items()},
        }
    }


def ledger_with(tmp_path, cells):
    ledger = tmp_path / "ledger.json"
    ledger.write_text(json.dumps({"schema": 3, "bugs": {}, "releases": {"2.14.0": {"support": rows(cells)}}}))
    return ledger


def test_hostile_cells_render_as_literal_text_on_github():
    data = {"schema": 3, "bugs": {}, "releases": {"2.14.0": {"support": rows({HOSTILE_API: HOSTILE_CELL})}}}
    text = document(data, columns(data), "2026-12-03")
    body = text[text.index("## torch 2.14.0: departs") : text.index("## Every departure")]
    assert live(body, own=("h2", "ul", "li")) == [], live(body, own=("h2", "ul", "li"))
    assert render(body).count("<li") == 1  # the one note this page makes: nothing in the text made a list item
    assert unseen(text) == []
    assert set(table_widths(body[: body.index("## Workarounds")])) == {5}  # every row keeps its five cells
    assert set(table_widths(body[body.index("## Overview") : body.index("## Notes")])) == {2}
    prose = [line for line in text.splitlines() if not line.startswith("|")]
    assert [line for line in prose if len(line) > 100] == []
    shown = render(body)
    assert "javascript:alert(1)" in shown and "\\x1b[2J" in shown  # still there, as text


def test_the_cli_writes_hostile_cells_and_keeps_the_page_when_a_write_fails(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("REPRO_LEDGER", str(ledger_with(tmp_path, {"setattr": HOSTILE_CELL})))
    out = tmp_path / "support-table.md"
    assert support_doc.main(["--out", str(out)]) == 0
    old = out.read_bytes()
    assert unseen(old.decode("utf-8")) == []
    bigger = {f"api_{n}": "works; " * 60 for n in range(40)}
    monkeypatch.setenv("REPRO_LEDGER", str(ledger_with(tmp_path, bigger)))
    with file_size_limit(len(old) + 100):  # a disk that fills while the new page is written
        assert support_doc.main(["--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert out.read_bytes() == old and "was not written" in err and len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ledger.json", "support-table.md"]


@pytest.mark.parametrize("cell", ["\udc9b", "a\ud800b"])
def test_a_lone_surrogate_in_a_cell_never_empties_the_page(tmp_path, monkeypatch, cell):
    """Before: write_text truncated the page, then failed to encode the surrogate: 0 bytes left."""
    out = tmp_path / "support-table.md"
    out.write_text("the page as it was\n")
    monkeypatch.setenv("REPRO_LEDGER", str(ledger_with(tmp_path, {"setattr": cell})))
    assert support_doc.main(["--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "\\ud" in text and unseen(text) == []


def test_a_matrix_result_is_replaced_whole_or_not_at_all(tmp_path, capsys):
    """``tracker.matrix run --out``: a disk that fills mid-write left a partial JSON file before."""
    from tracker.matrix import write_result

    out = tmp_path / "result.json"
    assert write_result(out, {"torch": "2.13.0", "stderr": []}) == 0
    old = out.read_bytes()
    with file_size_limit(len(old) + 100):
        assert write_result(out, {"torch": "2.13.0", "stderr": ["x" * 100] * 100}) == 2
    err = capsys.readouterr().err
    assert out.read_bytes() == old and "was not written" in err and len(err.strip().splitlines()) == 1
    assert [p.name for p in out.parent.iterdir()] == ["result.json"]


MARKERS = ("- a list item", "+ another", "=== a heading's underline", "--- a rule", "1. an ordered item", "2) one more")


def test_no_line_of_a_wrapped_note_starts_a_list_heading_or_rule():
    """``plain`` escaped a marker only at the start of a cell; wrapped at 100 columns, a cell put one at
    the start of a later line, and GitHub rendered list items, headings and rules there."""
    cells = {
        f"api_{n}_{m}": " ".join(["word"] * n) + f" {marker} and more words after it"
        for n in range(0, 40)
        for m, marker in enumerate(MARKERS)
    }
    data = {"schema": 3, "bugs": {}, "releases": {"2.14.0": {"support": rows(cells)}}}
    text = document(data, columns(data), "2026-12-05")
    notes = text[text.index("## Notes") : text.index("## Every departure")]
    assert any(line.lstrip().startswith(("\\-", "\\=", "\\+")) for line in notes.splitlines()[1:])  # wrapped there
    found = blocks(notes)
    assert (found["li"], found["ul"], found["ol"], found["hr"]) == (len(cells), 1, 0, 0), found
    assert sum(found[h] for h in ("h1", "h3", "h4", "h5", "h6")) == 0 and found["h2"] == 1, found
    assert "\\--versions" not in text  # our own prose, a code span wrapped onto a line, is left alone


def test_an_api_that_departs_on_a_device_never_reads_as_working():
    """Before: the works/departs lists were built from the CPU codes alone, so an API ``ok`` on CPU but
    departing on the merged NPU column stayed under "works", and the NPU result appeared nowhere."""
    support = rows({"to": "works", "npu": "works", "cuda": "works"})
    for api in support["cpu"]["rows"]:
        support["cpu"]["rows"][api]["codes"] = ["ok"]
    support["npu"] = {
        "python": "3.11.7",
        "platform": "linux-aarch64",
        "rows": {
            "to": {"codes": ["unexplained"], "cell": "differs: parameters stay on the host"},
            "npu": {"codes": ["ok"], "cell": "works"},
        },
    }
    data = {"schema": 3, "bugs": {}, "releases": {"2.14.0": {"support": support}}}
    text = document(data, columns(data), "2026-12-05")
    works = text[text.index("## torch 2.14.0: works") : text.index("## torch 2.14.0: departs")]
    departs = text[text.index("## torch 2.14.0: departs") : text.index("## Workarounds")]
    assert works.splitlines()[0] == "## torch 2.14.0: works as on `nn.Module` (measured on cpu, npu)"
    assert "`to`" not in works and "`npu`" in works
    assert "`cuda`" not in works  # measured on cpu only: not every measured device says so
    row = next(line for line in departs.splitlines() if line.startswith("| `to` |"))
    assert row == "| `to` | ok | not measured | unexplained | cpu: works; npu: differs: parameters stay on the host |"
