"""The search and the shrinking (repro/explore/run.py) and the CLI's --explore: a seed is one run, a
reduction keeps the modules its steps act on, and a bounded exploration ends as its exit code says."""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import HealthCheck, find, settings

from helpers import run
from repro.catalogue import BUGS, explain
from repro.cli import main
from repro.explore.case import Case
from repro.explore.classify import Explanation, Finding, Kind
from repro.explore.generate import Base, Level, ModelSpec
from repro.explore.run import Exploration, Found, _reduced, explore, reductions
from repro.explore.steps import Call, Hook, HookKind, Mode
from tracker.confirm import read_exploration, read_explored_workarounds

LEAF = Level(Base.EAGER, 0, (), (), (), ())
ROOT = Level(Base.SCRIPT_METHOD, 1, (True,), (LEAF, None, LEAF), (), (0, 1, 2))
CASE = Case(
    ModelSpec(ROOT, 3, 2),
    (Hook(HookKind.FORWARD, 3, False), Call(Mode.PLAIN, True, False), Hook(HookKind.FORWARD_PRE, 2, False)),
    False,
)


@pytest.mark.slow  # the quick suite's explorations stay within 10 s (issue 45): the CLI's and the reach's
def test_a_seed_draws_the_same_cases():
    """Two explorations of one seed agree on every departure found within the cases both ran. No case
    ran here for want of a worker: run after tests that compiled and exported in this process, the
    workers hung in their first case (until they run torch on one thread: GNU OpenMP's pool does not
    survive a fork) and every case waited out the patience, 60 s for this test."""
    first = explore(3, 11, explain, shrink=False)
    second = explore(3, 11, explain, shrink=False)
    both = min(first.cases, second.cases)
    assert both > 0 and first.fallbacks == second.fallbacks == 0

    def early(exploration):
        return {sig: found.first for sig, found in exploration.found.items() if found.first <= both}

    assert early(first) == early(second)


@pytest.mark.slow  # a second exploration (2.5 s): the quick suite keeps the CLI's
def test_an_exploration_within_a_reach_draws_and_shrinks_only_models_it_holds_on():
    """``--bug ID``: the bug's reach keeps every model, the shrunk ones too (a reduction that drops the
    raise would leave the reach)."""
    raising = BUGS["jit-error-replaces-exception"]
    exploration = explore(4, 3, explain, within=(raising.id, raising.reach))
    assert exploration.cases > 0 and exploration.within == raising.id
    shown = [found.example()[0] for found in exploration.found.values()]
    assert shown and all(raising.reach(case.spec.traits()) for case in shown)
    assert all(case.spec.traits().raises_compiled for case in shown)


def test_the_budget_ending_while_hypothesis_shrinks_is_found_inside_the_group_it_raises():
    """find() that has found an example and then meets the budget's end raises both as a group (seen in
    the tracker's first run of --explore --workarounds: the explorer printed a traceback, no report)."""
    from repro.explore.run import _Spent, spent_in

    class Group(Exception):  # what ExceptionGroup is to spent_in (Python 3.9 and 3.10 have none)
        def __init__(self, *exceptions: BaseException) -> None:
            self.exceptions = exceptions

    assert spent_in(Group(ValueError("found"), Group(_Spent()))) and spent_in(_Spent())
    assert not spent_in(Group(ValueError("found"))) and not spent_in(ValueError())


def test_a_reduction_keeps_the_module_a_step_acts_on_or_drops_the_step():
    """Children keep their attribute names when one before them is dropped: ``c2`` stays ``c2``."""
    paths = CASE.spec.paths()
    assert paths[3] == "c2" and paths[2] == "c1"
    without_first = Level(Base.SCRIPT_METHOD, 1, (True,), (None, LEAF), (), (0, 1), names=(1, 2))
    reduced = _reduced(CASE, without_first, (True, True, True), (1, 1), False)
    kept = reduced.spec.paths()
    assert [kept[s.where] for s in reduced.steps if isinstance(s, Hook)] == ["c2", "c1"]
    gone = Level(Base.SCRIPT_METHOD, 1, (True,), (None,), (), (0,), names=(1,))
    assert [type(s) for s in _reduced(CASE, gone, (True, True, True), (1, 1), False).steps] == [Call, Hook]


@pytest.mark.slow  # 200 examples of shrinking (seconds)
def test_hypothesis_shrinks_a_reduction_to_what_the_predicate_needs():
    smallest = find(
        reductions(CASE),
        lambda case: any(isinstance(s, Hook) and case.spec.paths()[s.where] == "c2" for s in case.steps),
        settings=settings(max_examples=200, database=None, suppress_health_check=list(HealthCheck)),
    )
    assert len(smallest.steps) == 1 and smallest.spec.batch == smallest.spec.features == 1
    assert smallest.spec.paths() == ["", "c2"]


def test_a_bounded_exploration_from_the_command_line():
    """A few seconds, derandomized: it runs cases, and its exit code says whether a departure is
    unexplained; each unexplained one carries its script."""
    proc = run(["-m", "repro", "--explore", "--budget", "3", "--seed", "0", "--json"])
    assert proc.returncode in (0, 1) and proc.stderr == "", proc.stderr[-2000:]  # no progress line: no tty
    report = json.loads(proc.stdout)
    assert report["cases"] > 0 and report["seed"] == 0
    unexplained = [d for d in report["departures"] if d["explanation"] == "unexplained"]
    assert proc.returncode == (1 if unexplained else 0) and report["unexplained"] == len(unexplained)
    assert all(d["script"] and "sys.exit(1 if subclass != eager else 0)" in d["script"] for d in unexplained)
    record = read_exploration(proc.stdout, proc.stderr, proc.returncode)  # what the tracker keeps of it
    assert record["cases"] == report["cases"] and record["apis"]["forward"] == report["cases"]  # each case calls
    assert len(record["unexplained"]) == report["unexplained"] and set(record["bugs"]) <= set(BUGS)
    # what the benchmark reports: each twin's time, measured in the workers, and a worker's memory
    costs = report["costs"]
    assert costs["scripted_twins_s"] > 0 and costs["eager_twins_s"] > 0 and 0 <= costs["torchscript_share"] < 1
    assert costs["worker_peak_rss_mb"] > 100  # a process that imported torch


def test_the_share_torchscript_adds_is_the_twin_under_tests_time_beyond_eagers():
    from repro.explore.run import Costs

    costs = Costs()
    costs.add(Costs(3.0, 1.0, 400.0))
    costs.add(Costs(3.0, 1.0, 350.0))  # a later worker, smaller
    assert (costs.scripted_s, costs.eager_s, costs.worker_rss_mb) == (6.0, 2.0, 400.0)
    assert costs.torchscript_share == 0.5 and Costs().torchscript_share == 0.0
    assert Costs(1.0, 2.0).torchscript_share == 0.0  # faster than eager: it adds nothing


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--budget", "5"], "--budget, --seed and --database are for --explore"),
        (["--database", "/tmp"], "--budget, --seed and --database are for --explore"),
        (["--explore", "--database", "/proc/version"], "is not a folder this user can write"),
        (["--explore", "--database", "/nonexistent-parent/db"], "is not a folder this user can write"),
        (["--explore", "--bug", "deepcopy-drops-subclass", "--bug", "copy-shares-training"], "--explore takes only"),
        (["--explore", "--slow"], "--explore takes only"),
        (["--explore", "--budget", "0"], "a number of seconds from 1 to 86400"),
        (["--explore", "--seed", "-1"], "a whole number from 0"),
        (["--explore", "--workarounds", "--bug", "nonpersistent-buffers-in-state-dict"], "workaround is none"),
        (["--explore", "--workarounds", "--bug", "child-hooks-bypassed"], "changes the model's forward"),
        (["--explore", "--workarounds", "--bug", "jit-save-drops-subclass-hooks"], "changes where the model's code"),
    ],
)
def test_explore_options_are_one_sentence_and_exit_2(capsys, argv, said):
    code: object
    try:
        code = main(argv)
    except SystemExit as exit:  # argparse's own errors, after its usage lines
        code = exit.code
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and said in err.splitlines()[-1], err


@pytest.mark.slow
def test_every_workaround_that_can_be_put_in_force_is_tried_on_generated_models():
    """--explore --workarounds without --bug: a verdict per bug whose workaround can be put in force
    around a run, each on the models it ran (none claimed for a bug that met none), and why each other
    bug was not tried; the exit code is 0 only when every verdict holds."""
    proc = run(["-m", "repro", "--explore", "--workarounds", "--budget", "2", "--json"])
    assert proc.returncode in (0, 1) and proc.stderr == "", proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    tried = {e["id"]: e for e in report["explorations"]}
    skipped = {entry["id"]: entry["why"] for entry in report["not_tried"]}
    assert set(tried) | set(skipped) == set(BUGS) and not set(tried) & set(skipped)
    for bug_id, why in skipped.items():
        workaround = BUGS[bug_id].workaround
        can = workaround is not None and workaround.apply is not None and not (workaround.style or workaround.instead)
        changes = ("is none", "changes the model's forward", "changes where the model's code does it")
        assert why.startswith("met no model") if can else why in changes
    for bug_id, exploration in tried.items():
        workaround = BUGS[bug_id].workaround
        assert workaround and exploration["cases"] > 0 and exploration["workaround"]["name"] == workaround.name
        assert exploration["workaround"]["space"].startswith(f"{exploration['cases']} generated models")
    holds = all(e["workaround"]["verdict"] == "holds" for e in tried.values())
    assert tried and proc.returncode == (0 if holds else 1)
    kept = read_explored_workarounds(proc.stdout, proc.stderr, proc.returncode)  # what the tracker keeps
    assert {bug_id: record["verdict"] for bug_id, record in kept.items()} == {
        bug_id: e["workaround"]["verdict"] for bug_id, e in tried.items()
    }


def _found(kind: Kind, explanation: Explanation, cause: str | None, without: bool = False) -> Found:
    finding = Finding(1, "m = copy.deepcopy(m)", kind, "detail", explanation, cause)
    return Found(finding, CASE, 1, without=without)


@pytest.mark.parametrize(
    ("found", "verdict"),
    [
        ([], "holds"),
        ([_found(Kind.SILENT, Explanation.BUG, "copy-shares-training")], "holds"),  # another bug's
        ([_found(Kind.LOUD, Explanation.UNDOCUMENTED, None)], "holds"),  # a refusal TorchScript makes
        ([_found(Kind.SILENT, Explanation.UNEXPLAINED, None, without=True)], "holds"),  # the same without it
        ([_found(Kind.LOUD, Explanation.BUG, "deepcopy-drops-subclass")], "loud"),
        ([_found(Kind.LOUD, Explanation.UNEXPLAINED, None)], "loud"),
        (
            [
                _found(Kind.LOUD, Explanation.BUG, "deepcopy-drops-subclass"),
                _found(Kind.SILENT, Explanation.UNEXPLAINED, None),
            ],
            "silently wrong",
        ),
    ],
    ids=["nothing", "another bug", "a refusal", "not its doing", "its bug, loud", "unexplained, loud", "silent wins"],
)
def test_a_workaround_under_the_explorer_is_judged_by_what_still_departs(found, verdict):
    exploration = Exploration(7, 30.0, cases=12, within="deepcopy-drops-subclass", workaround="w")
    exploration.found = {str(n): f for n, f in enumerate(found)}
    assert exploration.workaround_verdict().value == verdict
    assert bool(exploration.against_workaround()) is (verdict != "holds")  # each shown as a script
    assert set(map(id, exploration.against_workaround())) <= set(map(id, exploration.shown()))
    assert exploration.space() == (
        "12 generated models of depth <=3 in the reach of deepcopy-drops-subclass, seed 7, budget 30 s"
    )
    exploration.replayed = 5
    assert "deepcopy-drops-subclass (5 of them replayed from a database of earlier departures), seed 7" in (
        exploration.space()
    )


@pytest.mark.slow
def test_a_workaround_that_does_nothing_reads_silently_wrong_and_the_real_one_holds():
    """The same seed and budget: with nothing in force the bug departs silently on generated models
    (a deep copy's parameters that are not leaves), with its workaround no case departs through it."""
    bug = BUGS["deepcopy-parameters-not-leaves"]
    assert bug.workaround and bug.workaround.apply
    nothing = explore(
        40, 0, explain, shrink=False, within=(bug.id, bug.reach), workaround=("none", contextlib.nullcontext)
    )
    real = explore(
        40, 0, explain, shrink=False, within=(bug.id, bug.reach), workaround=(bug.workaround.name, bug.workaround.apply)
    )
    assert nothing.workaround_verdict().value == "silently wrong"
    assert all(found.without for found in nothing.unexplained())  # doing nothing, they depart without it too
    assert real.workaround_verdict().value == "holds" and real.cases > 100


def test_the_text_of_workarounds_on_generated_models_says_each_verdict_why_others_were_not_tried():
    """One line per workaround tried, the bugs not tried grouped by why, and the whole exploration of
    each workaround that does not hold (its departures), every line within 100 columns."""
    from repro.formats.text import render_workaround_explorations

    holds = Exploration(0, 5.0, cases=9, within="copy-shares-training", workaround="repro.workaround.shallow_copy")
    wrong = Exploration(0, 5.0, cases=4, within="deepcopy-drops-subclass", workaround="repro.workaround.deepcopy")
    wrong.found = {"x": _found(Kind.SILENT, Explanation.BUG, "deepcopy-drops-subclass")}
    skipped = {"module-compile-noop": "is none", "quantize-dynamic-skips-subclass": "is none"}
    text = render_workaround_explorations("2.13.0", [holds, wrong], skipped)
    flat = " ".join(text.split())
    assert "- copy-shares-training: repro.workaround.shallow_copy holds on 9 generated models" in flat
    assert "- deepcopy-drops-subclass: repro.workaround.deepcopy silently wrong on 4 generated models" in flat
    assert "Not tried, as the workaround is none: module-compile-noop, quantize-dynamic-skips-subclass." in flat
    assert flat.count("Explained by a catalogued bug") == 1 and "deepcopy-drops-subclass: silent at" in flat
    # what the workaround answers for comes with its script, as an unexplained departure does
    assert "Still deepcopy-drops-subclass's, with its workaround in force, (1 of 1): silent at" in flat
    assert flat.count("Its script") == 1 and text.count("sys.exit(1 if subclass != eager else 0)") == 1
    assert all(len(line) <= 100 for line in text.splitlines())


@pytest.mark.slow
def test_after_an_exploration_a_generated_model_still_loads_in_this_process():
    """The exploration removes its folder when it ends: what loads a model afterwards (a second
    exploration of --explore --workarounds, a test) writes to a new one, not the removed one."""
    from repro.explore.loading import forget, loaded

    explore(1, 0, explain, shrink=False)
    forget(loaded("VALUE = 1\n", "after"))
