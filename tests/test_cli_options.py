"""No option silently ignored: each combination of ``python -m repro`` options either does what it
says or is one sentence, exit 2 (``repro.cli.main`` in this process; torch is already imported)."""

from __future__ import annotations

import re

import pytest

from helpers import A_BUG, ROOT
from repro.catalogue import BUGS
from repro.cli import main

OTHER = next(bug_id for bug_id in BUGS if bug_id != A_BUG)


@pytest.fixture
def repro_main(capsys):
    def call(*argv: str) -> tuple[int, str, str]:
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return call


def _one_sentence(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and len(lines[0]) <= 100 and "Traceback" not in err, err
    return lines[0]


def test_explain_gives_one_section_per_bug_asked_for(repro_main):
    code, out, _ = repro_main("--explain", "--bug", A_BUG, "--bug", OTHER)
    assert code == 0 and out.count("Root cause") == 2, out
    assert out.index(f"Root cause of {A_BUG} on torch") < out.index(f"Root cause of {OTHER}")
    assert max(len(line) for line in out.splitlines()) <= 100


def test_markdown_with_two_bugs_is_one_sentence_exit_2(repro_main):
    code, out, err = repro_main("--markdown", "--bug", A_BUG, "--bug", OTHER)
    assert (code, out) == (2, "") and "--markdown is about one bug" in _one_sentence(err)


@pytest.mark.parametrize("mode", ["--patch", "--candidates"])
def test_patch_and_candidates_are_about_one_bug(repro_main, mode):
    code, out, err = repro_main(mode, "--bug", A_BUG, "--bug", OTHER)
    assert (code, out) == (2, "") and f"{mode} is about one bug" in _one_sentence(err)


@pytest.mark.parametrize("mode", ["--markdown", "--patch", "--candidates"])
def test_no_bug_is_the_default_of_a_one_bug_mode(repro_main, mode):
    """Before, each of these filed, patched or judged the first catalogued bug when none was named."""
    code, out, err = repro_main(mode)
    assert (code, out) == (2, "") and f"{mode} is about one bug: name it with one --bug ID" in _one_sentence(err)


def test_explain_without_a_bug_explains_every_bug(repro_main, monkeypatch):
    """Each bug's own measurement is tested in tests/filing; here, that none is left out, in order."""
    import repro.catalogue

    explained: list[str] = []

    def steps(bug):
        explained.append(bug.id)
        return [f"{bug.id} measured"]

    monkeypatch.setattr(repro.catalogue, "steps", steps)
    code, out, _ = repro_main("--explain")
    assert code == 0 and explained == list(BUGS) and [b for b in BUGS if f"{b} measured" not in out] == []


@pytest.mark.parametrize("mode", [[], ["--list-bugs"], ["--patch"], ["--explain"], ["--json"]])
def test_an_unknown_bug_is_one_sentence_exit_2_in_every_mode(repro_main, mode):
    code, out, err = repro_main(*mode, "--bug", "full-backward-hook-flg")
    said = _one_sentence(err)
    assert (code, out) == (2, "") and len(said) <= 100, said
    assert said.endswith("unknown bug id; did you mean 'full-backward-hook-flag'?"), said


def test_list_bugs_lists_the_bugs_asked_for_and_needs_no_ledger(repro_main, monkeypatch, tmp_path):
    monkeypatch.setenv("REPRO_LEDGER", str(tmp_path / "missing.json"))
    code, out, _ = repro_main("--list-bugs", "--bug", OTHER)
    assert code == 0 and out.startswith(f"{OTHER}: ") and f"{A_BUG}:" not in out
    code, out, _ = repro_main("--list-bugs")
    assert code == 0
    assert [bug_id for bug_id in BUGS if f"{bug_id}: " not in out] == []


def test_the_patch_note_fits_100_columns(repro_main):
    code, out, err = repro_main("--patch", "--bug", A_BUG)
    assert code == 0 and out.startswith("--- a/torch/jit/_recursive.py")
    assert err.startswith("note: the torch/ hunks are against the installed release")
    assert max(len(line) for line in err.splitlines()) <= 100


@pytest.mark.slow  # proofs through the CLI (1.6 s)
@pytest.mark.needs_bug("autocast-compiled-float32")  # a workaround broken where the bug is gone still works
def test_workarounds_proves_each_one_and_fails_when_one_does_not_work(repro_main, monkeypatch):
    import dataclasses

    from repro.catalogue import BUGS

    code, out, _ = repro_main("--workarounds", "--bug", "autocast-compiled-float32")
    assert code == 0 and "autocast-compiled-float32: works (holds): " in out and re.search(r"(\d+) of \1 calls", out), (
        out
    )
    assert "held on: calls 1-3 of a first and a later instance, sizes 2x2, 3x2, 1x1" in out
    bug = BUGS["autocast-compiled-float32"]
    assert bug.workaround
    broken = dataclasses.replace(bug.workaround, style="")  # the plain forward is the workaround: dropped
    monkeypatch.setitem(BUGS, bug.id, dataclasses.replace(bug, workaround=broken))
    code, out, _ = repro_main("--workarounds", "--bug", "autocast-compiled-float32")
    assert code == 1 and "DOES NOT WORK (silently wrong)" in out, out
    assert re.search(r"\d+ silently wrong where it is meant to work", out), out


def test_help_names_every_exit_code_the_readme_names():
    """--help listed 0, 1 and 2 and left out 130 (Ctrl-C), which the README and both tools use."""
    from repro.cli import build_parser
    from tracker.check_upstream import build_parser as tracker_parser

    said = " ".join((ROOT / "README.md").read_text().split("Exit code", 1)[1].split("\n\n", 1)[0].split())
    codes = re.findall(r"\b(\d+) (?:means|a usage|Ctrl-C)", said)
    assert codes == ["0", "1", "2", "130"], codes
    for help_text in (build_parser().format_help(), tracker_parser().format_help()):
        epilog = " ".join(help_text.split("Exit codes:", 1)[1].split())
        assert [code for code in ("0", "1", "2", "130") if not re.search(rf"\b{code} ", epilog)] == [], epilog
