"""The text report's runs (issue 46): grouped by API, scenario and outcome, each line naming the shapes
and styles its runs were on, within 100 columns and nothing cut to "..."."""

from __future__ import annotations

import re
from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from repro.cli import main
from repro.formats.text import runs_on

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


SHAPES = ["flat", "child", "in eager parent, with child", "two deep"]  # one with a comma in its name
STYLES = ["script_method", "plain_forward", "torch.jit.script"]
INSTANCES = ["first", "later"]


def _named(text: str, instances: set[str]) -> set[tuple[str, str, str]]:
    """The (shape, style, instance) runs one of ``runs_on``'s texts claims, read back from its words
    (no instance named: each of the scenario's ``instances``)."""
    only = sorted(instances)
    if text.endswith(" instance only"):
        text, _, said = text.rpartition(", ")
        only = said.removesuffix(" instance only").split(" and ")
    shapes, _, styles = text.rpartition(" x ")
    *first, last = styles.split(" and ")
    named_styles = [*(s for part in first for s in part.split(", ")), last]
    return {(shape, style, i) for shape in shapes.split("; ") for style in named_styles for i in only}


@settings(max_examples=100, deadline=None, derandomize=True)
@given(
    ran=st.sets(st.tuples(st.sampled_from(SHAPES), st.sampled_from(STYLES), st.sampled_from(INSTANCES)), min_size=1),
    data=st.data(),
)
def test_runs_on_names_exactly_the_runs_that_gave_an_outcome(ran, data):
    """The lines once claimed every shape x every style of an outcome's runs: "match on flat; child first
    x script_method and plain_forward" where script_method matched on flat only."""
    gave = data.draw(st.sets(st.sampled_from(sorted(ran)), min_size=1))  # the runs with this outcome
    runs = [SimpleNamespace(scenario=SimpleNamespace(model=m), style=s, instance=i) for m, s, i in sorted(gave)]
    instances = {i for _, _, i in ran}
    texts = runs_on(runs, SHAPES, STYLES, instances)  # type: ignore[arg-type]  # what it reads of a result
    claims = [_named(text, instances) for text in texts]
    assert set().union(*claims) == gave, texts  # nothing claimed that did not give it, nothing left out
    assert sum(map(len, claims)) == len(gave), texts  # each run named once
