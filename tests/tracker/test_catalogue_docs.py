"""The docs' lists of bugs are derived from the catalogue (issue 44, item 2): the committed pages are
what the generator writes now, and a bug added to the catalogue reaches every list with no other edit."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from markdown_render import table_widths, tags

from helpers import ROOT, first_quick, run
from repro.catalogue import BUGS
from tracker.catalogue_docs import PARTS, begin, end, generated

PAGES = sorted({page for page, _ in PARTS})


def test_the_committed_pages_are_what_the_catalogue_gives_now():
    proc = run(["-m", "tracker.catalogue_docs", "--check"])
    assert proc.returncode == 0 and proc.stdout == "", proc.stdout + proc.stderr


@pytest.fixture
def pages(tmp_path):
    """A checkout's pages, and what they are made from beyond the catalogue: the ledger and each bug
    folder's downstream.md."""
    inputs = [Path("repro/ledger.json"), *(p.relative_to(ROOT) for p in ROOT.glob("repro/catalogue/*/downstream.md"))]
    for page in [*map(Path, PAGES), *inputs]:
        (tmp_path / page).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / page, tmp_path / page)
    return tmp_path


def test_a_new_bug_reaches_every_list_and_a_pipe_stays_in_its_cell(pages):
    first = next(iter(BUGS.values()))
    new = replace(first, id="zz-new-bug", headline="a | b", title="after __init__", symptom="Module.__new__() x")
    (pages / "repro" / "catalogue" / "zz_new_bug").mkdir()
    (pages / "repro" / "catalogue" / "zz_new_bug" / "downstream.md").write_text("Its workaround.\n\n<!-- proof -->\n")
    written = generated(pages, {**BUGS, new.id: new})
    for (page, name), _ in PARTS.items():
        text = written[page]
        part = text[text.index(begin(name, page)) : text.index(end(name, page))]
        if page.endswith(".toml"):  # both import contracts name its folder
            assert part.count('"repro.catalogue.zz_new_bug",') == 2, part
            continue
        if name == "holdings":  # what the ledger holds names no bug; it counts the catalogue
            assert f"(the catalogue has {len(BUGS) + 1})" in " ".join(part.split()), part
            continue
        if name == "workarounds":  # its section last, saying the ledger holds no proof of it yet
            assert part.split("### `zz-new-bug`\n\nIts workaround.\n\nNot proven yet: ")[1].count("### ") == 0
            continue
        assert "`zz-new-bug`" in part, (page, name)
        widths = table_widths(part[len(begin(name)) :])
        assert len(set(widths)) == 1 and len(widths) == len(BUGS) + 2, (page, widths)  # header and new row
        assert "strong" not in [tag for tag, _ in tags(part)], (page, name)  # __init__ is code, not bold
    assert generated(pages) == {page: (pages / page).read_text() for page in PAGES}  # the copies are current


@pytest.mark.slow  # two fresh interpreters (1 s)
def test_a_stale_page_is_named_by_check_and_rewritten_without_it(pages):
    readme = pages / "README.md"
    readme.write_text(readme.read_text().replace(f"| `{next(iter(BUGS))}` |", "| `renamed` |"))
    stale = readme.read_text()
    check = run(["-m", "tracker.catalogue_docs", "--check", "--root", str(pages)])
    assert check.returncode == 1 and check.stdout.splitlines() == [
        "README.md: stale (run python -m tracker.catalogue_docs)"
    ]
    assert readme.read_text() == stale  # --check writes nothing
    write = run(["-m", "tracker.catalogue_docs", "--root", str(pages)])
    assert write.returncode == 0 and write.stdout.splitlines() == ["README.md: written"]
    assert readme.read_text() == (ROOT / "README.md").read_text()


@pytest.mark.parametrize("damage", first_quick(["no-end", "twice", "reversed"]))
def test_a_page_without_its_markers_is_one_sentence_exit_2(pages, damage):
    filing = pages / "docs" / "filing.md"
    text = filing.read_text()
    b, e = begin("candidates"), end("candidates")
    damaged = {
        "no-end": text.replace(e, ""),
        "twice": text.replace(b, f"{b}\n{b}"),
        "reversed": text.replace(b, "@@B@@").replace(e, b).replace("@@B@@", e),
    }[damage]
    filing.write_text(damaged)
    proc = run(["-m", "tracker.catalogue_docs", "--root", str(pages)])
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1 and "docs/filing.md" in proc.stderr
    assert filing.read_text() == damaged and (pages / "README.md").read_text() == (ROOT / "README.md").read_text()


@pytest.mark.parametrize("module", ["catalogue_docs", "patches_on_main"])
def test_ctrl_c_is_one_line_exit_130(module, monkeypatch, capsys, tmp_path):
    """Ctrl-C while a tool reads or checks: one line, exit 130, nothing half-written."""
    import importlib

    tool = importlib.import_module(f"tracker.{module}")

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(tool, "current" if module == "catalogue_docs" else "check", interrupted)
    argv = ["--check"] if module == "catalogue_docs" else ["--checkout", str(tmp_path)]
    assert tool.main(argv) == 130
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and "interrupted" in err and len(err) <= 101


def test_the_workaround_figures_are_the_ledgers(pages):
    """docs/downstream.md's counts come from the ledger's record of the proof, not from a run: a count
    changed in the ledger is the count the page shows."""
    path = pages / "repro" / "ledger.json"
    ledger = json.loads(path.read_text())
    bug_id = next(iter(BUGS))
    for entry in ledger["releases"].values():  # whichever release the page reads
        proof = entry.get("bugs", {}).get(bug_id, {}).get("workaround")
        if proof:
            proof["summary"] = proof["summary"].replace(f"{proof['matched']} of", "4321 of", 1)
    path.write_text(json.dumps(ledger))
    section = generated(pages)["docs/downstream.md"].split(f"### `{bug_id}`")[1].split("### ")[0]
    assert "4321 of" in " ".join(section.split())


@pytest.mark.parametrize("damage", first_quick(["fragment", "ledger"]))
def test_a_section_without_its_inputs_is_one_sentence_exit_2(pages, damage):
    if damage == "fragment":
        fragment = next((pages / "repro" / "catalogue").glob("*/downstream.md"))
        fragment.write_text(fragment.read_text().replace("<!-- proof -->", ""))
        said = f"{fragment.parent.name}/downstream.md lacks its one <!-- proof --> line"
    else:
        path = pages / "repro" / "ledger.json"
        ledger = json.loads(path.read_text())
        for entry in ledger["releases"].values():
            for verdicts in entry.get("bugs", {}).values():
                (verdicts.get("workaround") or {}).pop("space", None)
        path.write_text(json.dumps(ledger))
        said = "the ledger holds no proof saying what it held on: run tracker.check_upstream"
    before = (pages / "docs" / "downstream.md").read_text()
    proc = run(["-m", "tracker.catalogue_docs", "--root", str(pages)])
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1 and said in proc.stderr, proc.stderr
    assert (pages / "docs" / "downstream.md").read_text() == before
