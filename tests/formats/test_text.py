"""The text report's runs (issue 46): grouped by API, scenario and outcome, each line naming the shapes
and styles its runs were on, within 100 columns and nothing cut to "..."."""

from __future__ import annotations

import re

from repro.cli import main

BUG = "full-backward-hook-flag"  # data: a bug whose scenarios run on many shapes


def _report(capsys) -> list[str]:
    code = main(["--bug", BUG])
    out = capsys.readouterr().out
    assert code in (0, 1)
    return out.splitlines()


def _runs_section(lines: list[str]) -> list[str]:
    start = next(i for i, line in enumerate(lines) if line.startswith("Under each API")) + 1
    end = next(i for i, line in enumerate(lines) if line == "Details:")
    return lines[start:end]


def test_a_scenario_run_on_many_shapes_is_one_line_naming_them(capsys):
    runs = _runs_section(_report(capsys))
    start = runs.index("register_full_backward_hook") + 1
    section = runs[start : next(i for i in range(start, len(runs)) if runs[i] and not runs[i].startswith(" "))]
    named = [line for line in section if line.startswith("  called with grad_input and grad_output")]
    assert len(named) == 1, named  # it was 8 identical rows, one per shape, that named none
    text = " ".join(section[section.index(named[0]) :][:4])
    assert re.search(r": (raises \(full-backward-hook-flag\)|match) on flat; child first;", text), text
    assert "x script_method and plain_forward" in " ".join(text.split())


def test_every_line_fits_and_nothing_is_cut(capsys):
    lines = _report(capsys)
    assert [line for line in lines if len(line) > 100] == []
    assert [line for line in _runs_section(lines) if "..." in line] == []
    apis = [line for line in _runs_section(lines) if line and not line.startswith(" ")]
    assert len(apis) == len(set(apis))  # each API once, its scenarios under it
