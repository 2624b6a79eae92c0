"""Every human-readable line fits 100 columns: each command run on the installed torch, in this process
(``repro.cli.main`` with capsys; torch is already imported here). JSON, Markdown bodies, diffs and
verbatim quotes are exempt (a diff's added lines are ours: they fit too); the pytest header and summary
are checked in test_expect.py, run_patched's usage in test_run_patched.py."""

from __future__ import annotations

import json

import pytest

from helpers import A_BUG, ROOT, first_quick, run
from repro.catalogue import BUGS
from repro.cli import main
from tracker.summary import text, wrap
from tracker.sweep import Outcome

WIDTH = 100


def _wide(output: str) -> list[str]:
    return [line for line in output.splitlines() if len(line) > WIDTH]


@pytest.fixture
def repro_main(capsys):
    def call(*argv: str) -> tuple[int, str, str]:
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return call


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--list-bugs"],
        pytest.param(["--explain"], marks=pytest.mark.slow),  # every bug's cause: 2.5 s
        *first_quick(["--explain", "--bug", b] for b in BUGS if b != A_BUG),
    ],
    ids=lambda argv: " ".join(argv) or "default",
)
def test_the_reproducer_text_fits(repro_main, argv):
    code, out, err = repro_main(*argv)
    assert code in (0, 1) and out.strip(), err
    assert _wide(out) == [] and _wide(err) == []


@pytest.mark.parametrize("bug_id", first_quick(BUGS))  # a whole run each: 0.4 s, a dynamo one 1-2 s
def test_a_per_bug_report_fits(repro_main, bug_id):
    code, out, err = repro_main("--bug", bug_id)
    assert code in (0, 1) and _wide(out) == [] and _wide(err) == []


@pytest.mark.parametrize("bug_id", BUGS)
def test_the_lines_each_upstream_patch_adds_fit(bug_id):
    """Upstream lints at 120 columns; what we add fits our 100 (the diff's context is torch's own)."""
    from repro.filing.upstream_patch import proposed_diff

    added = [line for line in proposed_diff(BUGS[bug_id]).splitlines() if line.startswith("+")]
    assert added and _wide("\n".join(added)) == []


@pytest.mark.parametrize(
    "argv", [["benchmarks/bench_repro.py", "--help"], ["benchmarks/bench_repro.py", "--bug", "x" * 200]]
)
def test_the_benchmarks_usage_fits(argv):
    """argparse's ``choices`` printed all 18 bug ids on one line, in the usage and in the error."""
    proc = run(argv)
    assert proc.returncode in (0, 2) and _wide(proc.stdout) == [] and _wide(proc.stderr) == [], proc.stderr


@pytest.mark.slow  # a fresh interpreter that imports torch
def test_the_suite_under_patch_help_is_its_docstring_and_fits():
    proc = run([".ci/suite-under-patch", "--help"])
    assert proc.returncode == 0 and "upstream patch in every process" in proc.stdout and _wide(proc.stdout) == []


@pytest.mark.slow  # starts the upstream patch's process, which imports torch
def test_the_candidates_text_fits(repro_main):
    code, out, err = repro_main("--candidates", "--bug", A_BUG)
    assert code == 0 and _wide(out) == [] and _wide(err) == []


def test_the_tracker_text_summary_of_the_committed_ledger_fits():
    ledger = json.loads((ROOT / "repro" / "ledger.json").read_text(encoding="utf-8"))
    shown = text(Outcome(dict(ledger["releases"]), ["error: " + "x" * 300], ["2.0.0: no report"]), ledger, [])
    assert "evidence: " in shown and _wide(shown) == []


def test_a_long_progress_line_wraps_at_spaces():
    line = "[1/3] 2.14.0: " + ", ".join(f"{bug_id}: present" for bug_id in BUGS) + " (1281323 bytes, 4 requests)"
    lines = wrap(line)
    assert len(lines) > 1 and _wide("\n".join(lines)) == [] and " ".join(x.strip() for x in lines) == line
