"""Departing cases kept between runs (repro/explore/corpus.py): every case the generator draws comes
back from its JSON as itself, a stored value that is not such a case is refused and dropped, and an
exploration with a database replays what the last one found before it draws anything new."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis.database import DirectoryBasedExampleDatabase

from repro.catalogue import explain
from repro.explore import corpus
from repro.explore.case import Case
from repro.explore.generate import Base, Level, ModelSpec
from repro.explore.run import cases, explore
from repro.explore.steps import Call, Hand, Handing, Mode

LEAF = Level(Base.EAGER, 0, (), (), (), ())
CASE = Case(
    ModelSpec(Level(Base.SCRIPT_METHOD, 1, (True,), (LEAF, None), (), (1, 0)), 2, 2),
    (Hand(Handing.DEEPCOPY), Call(Mode.PLAIN, True, False)),
    True,
)


@pytest.mark.slow  # 200 generated cases (1.5 s)
@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(cases())
def test_every_drawn_case_comes_back_from_its_json_as_itself(case):
    assert corpus.loads(corpus.dumps(case)) == case


def _edited(change):
    raw = json.loads(corpus.dumps(CASE))
    change(raw)
    return json.dumps(raw).encode()


@pytest.mark.parametrize(
    "value",
    [
        b"not json",
        b"[]",
        _edited(lambda raw: raw.update(batch=4)),  # larger than the generator draws
        _edited(lambda raw: raw.update(batch=True)),  # a flag where a number goes
        _edited(lambda raw: raw.update(later="yes")),
        _edited(lambda raw: raw.update(steps=[])),
        _edited(lambda raw: raw.update(extra=1)),
        _edited(lambda raw: raw["root"].update(base="__class__")),  # a name that is not a member
        _edited(lambda raw: raw["root"].update(ops=["MUL_BUFFER", "os.system('x')"])),
        _edited(lambda raw: raw["root"].update(ops=["ADD_PARAMETER", "RAISE"])),  # a raise after a statement
        _edited(lambda raw: raw["root"].update(order=[0, 0])),
        _edited(lambda raw: raw["root"].update(children=[None] * 4, order=[0, 1, 2, 3])),
        _edited(lambda raw: raw["steps"].append({"hand": "DEEPCOPY", "where": 0})),
        _edited(lambda raw: raw["steps"].append({"hook": "FORWARD", "where": 16, "changes": False})),
        b"[" * 100_000,
    ],
)
def test_a_stored_value_that_is_not_a_drawn_case_is_refused(value):
    with pytest.raises(corpus.BadCase):
        corpus.loads(value)


def test_a_model_deeper_than_the_generator_draws_is_refused():
    deep = LEAF
    for _ in range(3):
        deep = Level(Base.EAGER, 0, (), (deep,), (), (0,))
    with pytest.raises(corpus.BadCase, match="deeper"):
        corpus.loads(corpus.dumps(Case(ModelSpec(deep, 1, 1), CASE.steps, False)))


def test_the_database_holds_what_it_was_last_given_and_drops_what_is_not_a_case(tmp_path):
    other = Case(CASE.spec, (Call(Mode.NO_GRAD, False, False),), False)
    corpus.keep(tmp_path, [CASE, other])
    DirectoryBasedExampleDatabase(str(tmp_path)).save(corpus.KEY, b'{"root": 1}')
    assert sorted(map(corpus.dumps, corpus.replayed(tmp_path))) == sorted(map(corpus.dumps, [CASE, other]))
    assert len(list(DirectoryBasedExampleDatabase(str(tmp_path)).fetch(corpus.KEY))) == 2  # the bad one went
    corpus.keep(tmp_path, [other])
    assert corpus.replayed(tmp_path) == [other]


@pytest.mark.slow  # two explorations: the quick suite's stay within 10 s
def test_an_exploration_replays_what_the_last_one_found_first(tmp_path):
    """The second run of another seed starts with the first run's departures: each found again within
    the replayed cases, and the database then holds one case per departure of the second run."""
    first = explore(4, 3, explain, shrink=False, database=tmp_path)
    assert first.found and first.replayed == 0
    assert len(corpus.replayed(tmp_path)) == len({corpus.dumps(f.case) for f in first.found.values()})
    second = explore(4, 99, explain, shrink=False, database=tmp_path)
    assert second.replayed == len(first.found)
    early = {signature for signature, found in second.found.items() if found.first <= second.replayed}
    assert early == set(first.found)
    assert len(corpus.replayed(tmp_path)) == len({corpus.dumps(f.case) for f in second.found.values()})
