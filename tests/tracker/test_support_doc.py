"""docs/support-table.md from the ledger's measured columns: what was measured and why not, the newest
release as lists a backend pastes, older releases by difference, codes in order, one note per cell."""

from __future__ import annotations

import json

from repro.catalogue import BUGS
from repro.engine.by_design import BY_DESIGN
from repro.sanitise import code_names
from tracker import support_doc
from tracker.support_doc import columns, document


def row(codes: list[str], cell: str, left_out: int = 0) -> dict:
    return {"codes": codes, "cell": cell, "left_out": left_out}


def column(rows: dict) -> dict:
    return {"cpu": {"python": "3.11.7", "platform": "linux-x86_64", "rows": rows}}


NEWEST = {
    "setattr": row(["ok", "attribute-assignment-forwarded", "design"], "works (...); raises: attribute-...; refused"),
    "copy.copy": row(["ok"], "works"),
    "register_forward_hook": row(["ok"], "works", left_out=4),
    "torch.nn.utils.parametrizations.spectral_norm": row(["undocumented"], "refused undocumented (x.py:1)"),
    "cuda": row(["not-run"], "not run: no CUDA"),
}
OLDER = {**NEWEST, "copy.copy": row(["ok", "copy-shares-training"], "works; differs: copy-shares-training")}


def ledger(releases: dict) -> dict:
    return {"schema": 3, "bugs": {}, "releases": releases}


def page(releases: dict) -> str:
    data = ledger(releases)
    return document(data, columns(data), "2026-12-03")


def test_the_newest_release_is_two_lists_a_backend_pastes():
    text = page({"2.14.0": {"support": column(NEWEST)}, "2.13.0": {"support": column(OLDER)}})
    works = text.split("## torch 2.14.0: works as on `nn.Module`", 1)[1].split("##", 1)[0]
    departs = text.split("## torch 2.14.0: departs", 1)[1].split("##", 1)[0]
    assert "`copy.copy`" in works and "`register_forward_hook`" in works and "`setattr`" not in works
    assert "| `setattr` | ok/attribute-assignment-forwarded/design | not measured | not measured |" in departs
    assert "`torch.nn.utils.parametrizations.spectral_norm`" in departs  # full names, never cut


def test_an_api_a_present_bug_names_is_never_listed_as_working():
    """An API whose cells all read ok, but that a catalogued bug recorded present in the release names:
    it departs in a use the scenarios do not make. Where the bug is recorded fixed, it works again."""
    bug = next(b for b in BUGS.values() if "load_state_dict" in b.apis)
    rows = {**NEWEST, "load_state_dict": row(["ok"], "works")}
    for verdict, listed in (("present", False), ("fixed", True)):
        text = page({"2.14.0": {"support": column(rows), "bugs": {bug.id: {"dynamic": {"verdict": verdict}}}}})
        works = text.split("## torch 2.14.0: works as on `nn.Module`", 1)[1].split("##", 1)[0]
        heading, listing, *notes = works.strip().split("\n\n")  # the heading's "(measured on cpu)" first
        assert ("`load_state_dict`" in listing) is listed, works
        assert (f"`load_state_dict` ({bug.id})" in " ".join(" ".join(notes).split())) is not listed, works


def test_an_older_release_lists_only_what_differs_from_the_newest():
    text = page({"2.14.0": {"support": column(NEWEST)}, "2.13.0": {"support": column(OLDER)}})
    older = text.split("## Older releases", 1)[1].split("##", 1)[0]
    assert "`copy.copy` ok/copy-shares-training (in 2.14.0: ok)" in older and "`setattr`" not in older


def test_one_note_per_distinct_cell_names_its_releases_and_left_out_runs():
    text = page({"2.14.0": {"support": column(NEWEST)}, "2.13.0": {"support": column(OLDER)}})
    notes = text.split("## Notes", 1)[1].split("\n## ", 1)[0]
    assert "`setattr` on 2.13.0, 2.14.0:" in notes  # the same cell in both: one note
    assert "`copy.copy` on 2.13.0: works; differs: copy-shares-training" in notes
    assert "`register_forward_hook` on 2.13.0, 2.14.0: works (4 runs left out" in notes


def test_the_page_says_what_was_measured_where_and_why_other_releases_are_missing():
    releases = {
        "2.14.0": {"support": column(NEWEST)},
        "2.12.0": {"support_legacy": {"setattr": "works"}},
        "2.11.0": {"bugs": {}},
    }
    text = page(releases)
    measured = text.split("## What was measured", 1)[1].split("\n## ", 1)[0]
    assert "| 2.14.0 | cpu | 3.11.7 | linux-x86\\_64 | 5 | 4 |" in measured  # escaped: the ledger's text
    assert "CUDA and NPU columns: not measured" in measured
    assert "- 2.12.0: measured only with an earlier scenario table" in measured
    assert "- 2.11.0: no dynamic run" in measured and "check_upstream --versions X.Y.Z" in " ".join(measured.split())


def test_every_code_is_explained_and_every_departure_classified_with_its_source():
    text = page({"2.14.0": {"support": column(NEWEST)}})
    for code in ("ok", "design", "undocumented", "unexplained", "absent", "not-run", "eager-fails"):
        assert f"- `{code}`: " in text
    classified = text.split("## Every departure, classified", 1)[1]
    assert [bug_id for bug_id in BUGS if f"`{bug_id}`" not in classified] == []
    assert [
        entry.cite for entry in BY_DESIGN if entry.designed and entry.cite not in " ".join(classified.split())
    ] == []
    prose = [line for line in text.splitlines() if not line.startswith("|")]
    assert [line for line in prose if len(line) > 100] == []


def test_the_cli_writes_from_the_ledger_and_refuses_one_without_measurements(tmp_path, monkeypatch, capsys):
    path = tmp_path / "ledger.json"
    path.write_text(json.dumps(ledger({"2.14.0": {"support": column(NEWEST)}, "2.12.0": {}})))
    monkeypatch.setenv("REPRO_LEDGER", str(path))
    out = tmp_path / "support-table.md"
    assert support_doc.main(["--out", str(out)]) == 0 and "## torch 2.14.0: departs" in out.read_text()
    path.write_text(json.dumps(ledger({"2.12.0": {"support": {"setattr": "works"}}})))  # schema 3, old cells: invalid
    assert support_doc.main(["--out", str(out)]) == 2
    path.write_text(json.dumps({"schema": 2, "bugs": {}, "releases": {"2.12.0": {"support": {"setattr": "works"}}}}))
    assert support_doc.main(["--out", str(out)]) == 2  # migrated: its text cells are legacy, not measured here
    assert "holds no measured support table" in capsys.readouterr().err


def test_a_merged_device_column_fills_its_column_and_the_others_say_not_measured():
    npu = {"python": "3.11.7", "platform": "linux-aarch64", "rows": {"setattr": row(["ok"], "works")}}
    text = page({"2.14.0": {"support": {**column(NEWEST), "npu": npu}}})
    departs = text.split("## torch 2.14.0: departs", 1)[1].split("##", 1)[0]
    assert "| `setattr` | ok/attribute-assignment-forwarded/design | not measured | ok |" in departs
    assert "Accelerator columns merged from device reports: npu." in text


def test_every_model_shape_is_described_on_the_page():
    from repro.catalogue.bug import SHAPE_WORDS
    from repro.engine.models import MODELS

    assert set(SHAPE_WORDS) == set(MODELS)
    text = page({"2.14.0": {"support": column(NEWEST)}})
    described = {shape: f"| {code_names(shape)} | {code_names(words)} |" for shape, words in SHAPE_WORDS.items()}
    assert [shape for shape, row in described.items() if row not in text] == []
    assert "| hooked in `__init__`, before children |" in text  # GitHub would read __init__ as bold


def test_only_columns_measured_with_the_newest_releases_scenario_table_are_compared():
    newer = {"cpu": {**column(NEWEST)["cpu"], "table": "aaaa"}}
    older = {"cpu": {**column(OLDER)["cpu"], "table": "bbbb"}}
    same = {"cpu": {**column(OLDER)["cpu"], "table": "aaaa"}}
    text = page({"2.14.0": {"support": newer}, "2.13.0": {"support": older}, "2.12.0": {"support": same}})
    measured = text.split("## What was measured", 1)[1].split("\n## ", 1)[0]
    assert "| 2.14.0 | cpu |" in measured and "| 2.12.0 | cpu |" in measured and "| 2.13.0 | cpu |" not in measured
    assert "- 2.13.0: measured only with an earlier scenario table than the newest release's" in measured


def test_the_committed_page_is_what_the_committed_ledger_renders():
    """Backend teams paste docs/support-table.md: a ledger or catalogue change not regenerated into it
    (`python -m tracker.support_doc`) leaves them printing stale text."""
    from repro import ledger as ledger_io

    committed = support_doc.DEFAULT_OUT.read_text()
    data = ledger_io.load(ledger_io.DEFAULT_PATH)
    dated = committed.split("Regenerated on ", 1)[1][:10]
    assert committed == document(data, columns(data), dated)


def test_a_cell_the_ledger_cut_says_so_in_words_and_where_it_is_whole():
    """Issue 46: the page showed `... \\[cut\\]`; a note now says it is cut and what prints it whole."""
    from repro.ledger import CUT, MAX_CELL

    long = "raises: full-backward-hook-flag on " + "; ".join(f"shape {n}" for n in range(400))
    cell = long[: MAX_CELL - len(CUT)] + CUT
    rows = {**NEWEST, "register_full_backward_hook": row(["full-backward-hook-flag"], cell, left_out=8)}
    notes = page({"1.13.1": {"support": column(rows)}}).split("## Notes", 1)[1].split("\n## ", 1)[0]
    said = " ".join(notes.split("`register_full_backward_hook` on 1.13.1:", 1)[1].split("\n- ", 1)[0].split())
    assert "[cut]" not in said and "…" not in said
    assert said.endswith(
        "(cut here: the ledger keeps 2,000 characters of a cell; `python -m repro --support-table` on torch "
        "1.13.1 prints it whole) (8 runs left out: a feature this release lacks)"
    )


def test_the_committed_pages_show_our_code_names_as_code_on_github():
    """Issue 46, checked with GitHub's parser: no dunder name read as bold, no zero-width joiner in our own
    `@script_method`, on every generated page."""
    import re

    import cmarkgfm

    from helpers import ROOT
    from repro.sanitise import ZWJ

    for page in ("docs/support-table.md", "docs/downstream.md", "docs/reproducer.md", "docs/filing.md", "README.md"):
        text = (ROOT / page).read_text(encoding="utf-8")
        html = cmarkgfm.github_flavored_markdown_to_html(text)
        assert re.findall(r"<strong>(init|new|getstate|setattr|deepcopy|dict)</strong>", html) == [], page
        assert ZWJ not in text, page


EXPLORED = {
    "seed": 0,
    "budget_s": 600.0,
    "cases": 6423,
    "replayed": 12,
    "seconds": 361.0,
    "departures": {"a catalogued bug": 151, "unexplained": 3},
    "bugs": ["copy-shares-training"],
    "unexplained": ["silent at m = copy.copy(m): the copy's children of another class"],
    "apis": {"copy.copy": 800, "register_forward_hook": 2000},
}


def test_the_explorer_section_says_what_ran_per_release_and_how_much_of_each_api_it_covered():
    """A release with an explorer record is a row; the newest such release's cases per API, and the
    table's APIs it never exercised, in words; a release without one is not a row."""
    text = page(
        {
            "2.14.0": {"support": column(NEWEST), "explore": {"cpu": EXPLORED}},
            "2.13.0": {"support": column(OLDER), "explore": {"cpu": {**EXPLORED, "cases": 10}}},
            "2.12.0": {"support": column(OLDER)},
        }
    )
    section = text.split("## Generated models: what the explorer ran per release", 1)[1].split("\n## ", 1)[0]
    flat = " ".join(section.split())
    assert "| 2.14.0 | 6423 (12) | 0, 600 s | a catalogued bug 151, unexplained 3 | 1 | 1 |" in section
    assert "| 2.13.0 | 10 (12) |" in section and "| 2.12.0 |" not in section
    assert "Of the 6423 cases on torch 2.14.0, how many exercised each API of the table: `copy.copy` 800, " in flat
    assert "`register_forward_hook` 2000. Never exercised" in flat
    assert "`setattr`" in flat.split("Never exercised", 1)[1] and "`copy.copy`" not in flat.split("Never", 1)[1]
    assert "- silent at m = copy.copy(m): the copy's children of another class" in section


def test_without_an_explorer_record_the_section_says_so_and_claims_nothing():
    section = page({"2.14.0": {"support": column(NEWEST)}}).split("## Generated models", 1)[1].split("\n## ", 1)[0]
    assert "No release has an explorer record yet." in section and "|" not in section


def test_a_workaround_verdict_on_generated_models_is_shown_next_to_its_proof_for_that_workaround_only():
    bug = next(b for b in BUGS.values() if b.workaround and b.workaround.apply and not b.workaround.style)
    assert bug.workaround
    proof = {"status": "works", "workaround": bug.workaround.name, "runs": 2, "matched": 2, "summary": "s"}
    for name, shown in ((bug.workaround.name, True), ("an earlier workaround", False)):
        explored = {"workaround": name, "verdict": "holds", "space": "9 generated models", "cases": 9}
        release = {"support": column(NEWEST), "bugs": {bug.id: {"workaround": proof, "explored": explored}}}
        section = page({"2.14.0": release}).split("## Workarounds, proven per release", 1)[1].split("\n## ", 1)[0]
        line = next(line for line in section.splitlines() if line.startswith(f"| `{bug.id}`"))
        assert ("works; generated: holds (9)" in line) is shown and "works" in line, line
