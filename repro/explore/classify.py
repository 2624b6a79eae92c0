"""A case's two twins compared step by step, and the first departure explained or not.

A departure is **loud** where the twin under test raises and eager does not, **silent** where it
computes, calls or keeps something else with no error (the worse). It is judged the way the oracle
judges a scenario run (``repro.engine.oracle.judged``): a catalogued bug's when the catalogue's
recognisers say so (``explains``, handed in: the explorer does not know the bugs), TorchScript's
design where ``repro.engine.by_design`` cites it, an undocumented refusal where it only knows the
refusal, and else unexplained.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from repro.engine.by_design import refusal_by_message
from repro.engine.oracle import Explains, Side, judged
from repro.engine.scenarios import Scenario
from repro.explore.case import Case, Twin
from repro.explore.generate import STYLE
from repro.explore.steps import Call, Hand, Handing, Hook, api_of, describe, is_workaround, switched_too_late
from repro.traits import GENERATED
from repro.vocabulary import Verdict


class Kind(Enum):
    LOUD = "loud"  # raises where eager does not
    SILENT = "silent"  # another value, gradient, dtype, call or error class, with no error of its own


class Explanation(Enum):
    BUG = "a catalogued bug"
    DESIGN = "TorchScript's design (cited)"
    UNDOCUMENTED = "an undocumented refusal"
    UNEXPLAINED = "unexplained"


@dataclass(frozen=True)
class Finding:
    """The first step where the twins part, and what explains it."""

    step: int  # 1-based; 0: building the model
    what: str  # the step, in words
    kind: Kind
    detail: str
    explanation: Explanation
    cause: str | None  # the catalogued bug's id, where one explains it

    @property
    def signature(self) -> str:
        """What makes two findings the same departure: kind, explanation, the step's kind and the
        detail without numbers, addresses or names the generator made up."""
        detail = re.sub(r"Root(_\d+)*|\bc\d+\b|0x[0-9a-f]+|-?\d+(\.\d+)?", "#", self.detail)[:80]
        step = re.sub(r" on .*", "", self.what)
        return f"{self.kind.value} | {self.cause or self.explanation.value} | {step} | {detail}"


def compare(case: Case, scripted: Twin, eager: Twin, explains: Explains) -> Finding | None:
    """The first departure of the case, or None where the twin under test behaves as eager throughout
    (differences TorchScript's design alone explains are not departures; where a step is refused by
    design the case ends there, found as such)."""
    paths = case.spec.paths()
    instance = "later" if case.later else "first"
    style = STYLE[case.spec.root.base]
    if scripted.built is not None or eager.built is not None:
        if scripted.built == eager.built:
            return None
        return _judged(
            case,
            0,
            "building the model",
            "__init__",
            Side({}, scripted.built),
            Side({}, eager.built),
            style,
            instance,
            explains,
        )
    for number, step in enumerate(case.steps, start=1):
        mine, theirs = scripted.steps[number - 1], eager.steps[number - 1]
        my_error, their_error = scripted.errors[number - 1], eager.errors[number - 1]
        if mine == theirs and _caught(my_error) == _caught(their_error):
            continue  # the caller catches the same (or nothing): a message alone is no departure
        if my_error and (not their_error or refusal_by_message(my_error)):  # a refusal whatever eager did
            pair = Side(mine, my_error), Side(theirs, None)
        else:  # an error of another class, or eager's alone, is a difference like any other
            pair = Side({**mine, "raised": my_error}, None), Side({**theirs, "raised": their_error}, None)
        found = _judged(case, number, describe(step, paths), api_of(step), *pair, style, instance, explains)
        if found is not None and found.explanation is Explanation.BUG and is_workaround(step):
            # a function of repro.workaround claims its step behaves as eager's: whatever departs
            # there is the workaround's, even what a bug would explain without it (its own bug's, above all)
            return replace(found, explanation=Explanation.UNEXPLAINED, cause=None)
        if found is not None:
            return found
    return None


def _judged(
    case: Case,
    number: int,
    what: str,
    api: str,
    mine: Side,
    theirs: Side,
    style: str,
    instance: str,
    explains: Explains,
) -> Finding | None:
    apis = tuple(dict.fromkeys([api, *apis_of(case, number)]))
    scenario = Scenario(api, what, _nothing, apis, model=GENERATED, traits=case.spec.traits())
    result = judged(scenario, style, instance, mine, theirs, explains=explains)
    if result.verdict == Verdict.MATCH:
        return None
    if result.verdict == Verdict.REFUSED:
        documented = "(undocumented" not in result.detail
        explanation = Explanation.DESIGN if documented else Explanation.UNDOCUMENTED
        if explanation is Explanation.DESIGN and mine.error is None:
            return None  # a difference TorchScript makes on purpose, the only one: not a departure
        return Finding(number, what, Kind.LOUD, result.detail, explanation, None)
    kind = Kind.LOUD if result.verdict == Verdict.RAISES else Kind.SILENT
    if result.cause:
        return Finding(number, what, kind, result.detail, Explanation.BUG, result.cause)
    return Finding(number, what, kind, result.detail, Explanation.UNEXPLAINED, None)


def apis_of(case: Case, steps: int | None = None) -> tuple[str, ...]:
    """The APIs the case's first ``steps`` steps (at least one; all by default) exercise, as the
    support table names them: the model's ``__init__`` hooks, ``forward`` once anything called it
    (every mode does), and each step's."""
    built_with = ["register_forward_hook"] if any(level.hooked for _, level in case.spec.levels()) else []
    done = case.steps[: max(steps, 1)] if steps is not None else case.steps
    called = ["forward"] if any(isinstance(step, Call) for step in done) else []
    # a hook a workaround registered is that hook API's, for the departures of the calls after it
    # (a compiled parent bypassing it); a copy a workaround made is not copy.copy's
    stands_for = [step.kind.stands_for for step in done if isinstance(step, Hook) and step.kind.is_workaround]
    # a switch is among them only where it is in force: on before the first call, where it must be
    exercised = [api_of(step) for index, step in enumerate(done) if not switched_too_late(done, index)]
    undone = ["float" for step in done if isinstance(step, Hand) and step.to is Handing.DOUBLE]  # m.float() after
    return tuple(dict.fromkeys([*built_with, *called, *exercised, *undone, *stands_for]))


def _caught(error: str | None) -> str | None:
    """The class of a recorded error ("RuntimeError: ..."), as the caller catches it."""
    return error.split(":", 1)[0] if error else None


def _nothing(model: Any, rec: Any) -> None:
    """A generated case's steps are done by ``repro.explore.case``, not by a scenario body."""
