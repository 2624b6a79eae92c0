"""Departing cases kept between runs, so that a departure found once is replayed first the next time.

They are kept in a Hypothesis example database (``DirectoryBasedExampleDatabase``: the scheduled
workflow keeps its folder as an artifact), under one key, each case as JSON text. Not Hypothesis' own
choice sequences: the search collects departures instead of failing, so Hypothesis saves none, and a
choice sequence replays a different case once the strategies change. A case's JSON names only our
own vocabulary (enum member names, small numbers): reading one checks every part and refuses the
rest (a value from a downloaded artifact is data; the text a case becomes is written from that
vocabulary alone, never taken from the file).
"""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar

from repro.explore.case import Case
from repro.explore.generate import Base, Level, ModelSpec, Op, consistent
from repro.explore.steps import Assign, Assignment, Call, Hand, Handing, Hook, HookKind, Mode, Step, Switch, Switching

KEY = b"repro.explore.departures.v1"
MAX_BYTES = 64 * 1024  # of one case's JSON: a depth-3 model of three children each with 8 steps is ~6 KB
MAX_CHILDREN, MAX_DEPTH, MAX_STEPS, MAX_SIZE = 3, 3, 8, 3  # what the generator draws at most
E = TypeVar("E", bound=Enum)


class BadCase(ValueError):
    """A stored value that is not a case the generator could have drawn."""


def dumps(case: Case) -> bytes:
    """The case as compact JSON: enums by member name."""
    return json.dumps(
        {
            "root": _level_json(case.spec.root),
            "batch": case.spec.batch,
            "features": case.spec.features,
            "later": case.later,
            "steps": [_step_json(step) for step in case.steps],
        },
        separators=(",", ":"),
    ).encode()


def loads(data: bytes) -> Case:
    """The case ``dumps`` wrote, or ``BadCase`` for anything else."""
    if len(data) > MAX_BYTES:
        raise BadCase(f"a stored case of {len(data)} bytes, over {MAX_BYTES}")
    try:
        raw = json.loads(data)
    except (ValueError, RecursionError):
        raise BadCase("a stored case that is not JSON") from None
    found = _object(raw, {"root", "batch", "features", "later", "steps"})
    steps = found["steps"]
    if not isinstance(steps, list) or not 1 <= len(steps) <= MAX_STEPS:
        raise BadCase(f"a stored case whose steps are not a list of 1-{MAX_STEPS}")
    spec = ModelSpec(_level(found["root"], 1), _number(found["batch"], 1), _number(found["features"], 1))
    return Case(spec, tuple(_step(step) for step in steps), _flag(found["later"]))


def replayed(folder: Path) -> list[Case]:
    """Every case kept in the database at ``folder``, oldest name first; one that is not a case is
    dropped from it (it would be refused again on every run)."""
    from hypothesis.database import DirectoryBasedExampleDatabase

    database = DirectoryBasedExampleDatabase(str(folder))
    cases = []
    for value in sorted(database.fetch(KEY)):
        try:
            cases.append(loads(value))
        except BadCase:
            database.delete(KEY, value)
    return cases


def keep(folder: Path, cases: list[Case]) -> None:
    """Make ``cases`` what the database at ``folder`` holds: a case no longer given (its departure
    gone) is deleted, so the database grows with distinct departures, not with runs."""
    from hypothesis.database import DirectoryBasedExampleDatabase

    database = DirectoryBasedExampleDatabase(str(folder))
    wanted = {dumps(case) for case in cases}
    for value in set(database.fetch(KEY)) - wanted:
        database.delete(KEY, value)
    for value in wanted:
        database.save(KEY, value)


def _level_json(level: Level) -> dict[str, Any]:
    return {
        "base": level.base.name,
        "parameters": level.parameters,
        "buffers": list(level.buffers),
        "children": [None if child is None else _level_json(child) for child in level.children],
        "ops": [op.name for op in level.ops],
        "order": list(level.order),
        "names": list(level.names),
        "hooked": level.hooked,
    }


def _step_json(step: Step) -> dict[str, Any]:
    if isinstance(step, Hook):
        return {"hook": step.kind.name, "where": step.where, "changes": step.changes}
    if isinstance(step, Call):
        return {"call": step.mode.name, "backward": step.backward, "negative": step.negative}
    if isinstance(step, Hand):
        return {"hand": step.to.name}
    if isinstance(step, Switch):
        return {"switch": step.to.name}
    return {"assign": step.what.name, "where": step.where}


def _level(raw: Any, depth: int) -> Level:
    if depth > MAX_DEPTH:
        raise BadCase(f"a stored model deeper than {MAX_DEPTH}")
    found = _object(raw, {"base", "parameters", "buffers", "children", "ops", "order", "names", "hooked"})
    children = _list(found["children"], MAX_CHILDREN, "children")
    kids = tuple(None if child is None else _level(child, depth + 1) for child in children)
    order = tuple(_number(i, 0, len(kids) - 1) for i in _list(found["order"], MAX_CHILDREN, "order"))
    names = tuple(_number(n, 0, 99) for n in _list(found["names"], MAX_CHILDREN, "names"))
    if sorted(order) != list(range(len(kids))) or len(set(names)) != len(names) or len(names) not in (0, len(kids)):
        raise BadCase("a stored level whose order or names do not match its children")
    level = Level(
        _member(Base, found["base"]),
        _number(found["parameters"], 0, 1),
        tuple(_flag(b) for b in _list(found["buffers"], 2, "buffers")),
        kids,
        tuple(_member(Op, op) for op in _list(found["ops"], len(Op), "ops")),
        order,
        names,
        _flag(found["hooked"]),
    )
    if consistent(level) != level:
        raise BadCase("a stored level whose body uses members it lacks, or raises after its first statement")
    return level


def _step(raw: Any) -> Step:
    if not isinstance(raw, dict):
        raise BadCase("a stored step that is not an object")
    if "hook" in raw:
        found = _object(raw, {"hook", "where", "changes"})
        return Hook(_member(HookKind, found["hook"]), _number(found["where"], 0, 15), _flag(found["changes"]))
    if "call" in raw:
        found = _object(raw, {"call", "backward", "negative"})
        return Call(_member(Mode, found["call"]), _flag(found["backward"]), _flag(found["negative"]))
    if "hand" in raw:
        return Hand(_member(Handing, _object(raw, {"hand"})["hand"]))
    if "switch" in raw:
        return Switch(_member(Switching, _object(raw, {"switch"})["switch"]))
    found = _object(raw, {"assign", "where"})
    return Assign(_member(Assignment, found["assign"]), _number(found["where"], 0, 15))


def _object(raw: Any, keys: set[str]) -> dict[str, Any]:
    if not isinstance(raw, dict) or set(raw) != keys:
        raise BadCase(f"a stored part that is not an object of {', '.join(sorted(keys))}")
    return raw


def _list(raw: Any, most: int, what: str) -> list[Any]:
    if not isinstance(raw, list) or len(raw) > most:
        raise BadCase(f"stored {what} that are not a list of at most {most}")
    return raw


def _number(raw: Any, least: int, most: int = MAX_SIZE) -> int:
    if type(raw) is not int or not least <= raw <= most:
        raise BadCase(f"a stored number that is not a whole number from {least} to {most}")
    return raw


def _flag(raw: Any) -> bool:
    if type(raw) is not bool:
        raise BadCase("a stored flag that is not true or false")
    return raw


def _member(kind: type[E], raw: Any) -> E:
    if not isinstance(raw, str) or raw not in kind.__members__:
        raise BadCase(f"a stored {kind.__name__} that is none of ours")
    return kind[raw]
