"""The catalogue of known upstream bugs, as data: one folder per bug, found by this registry.

Each bug says which scenarios it covers (APIs and subclass styles), how to recognise its
departure in an oracle result, its static signature over torch's sources (for the tracker),
and a paste-ready script (which `python -m repro.bisect` runs). What TorchScript refuses on purpose,
which is not a bug, is the engine's (``repro.engine.by_design``).
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from repro.catalogue.bug import Bug
from repro.vocabulary import Tier, Verdict

if TYPE_CHECKING:  # the engine imports torch; the tracker reads the catalogue without it
    from repro.engine.oracle import ScenarioResult
    from repro.engine.scenarios import Scenario


def _discovered() -> dict[str, Bug]:
    """Every bug folder of this package (a subpackage whose ``BUG`` it declares), in catalogue order
    (``Bug.number``): adding a bug is adding its folder, with no registry to edit."""
    found = []
    for info in pkgutil.iter_modules(__path__):
        if info.ispkg:
            bug = importlib.import_module(f"{__name__}.{info.name}").BUG
            if info.name != bug.id.replace("-", "_"):
                raise ImportError(f"the folder {info.name} holds the bug {bug.id}: name it {bug.id.replace('-', '_')}")
            found.append(bug)
    numbers = [bug.number for bug in found]
    if len(set(numbers)) != len(numbers):
        raise ImportError(f"two bug folders share a number: {sorted(numbers)}")
    return {bug.id: bug for bug in sorted(found, key=lambda bug: bug.number)}


BUGS: dict[str, Bug] = _discovered()


SENTENCE = 72  # the most an unknown id's sentence takes: a tool's "prog: error: " fits before it in 100


class UnknownBug(KeyError):
    """An id the catalogue does not hold: one sentence within 100 columns naming the closest catalogued
    id (every tool that takes an id says it so; CLI exit code 2)."""

    def __str__(self) -> str:
        named = repr(str(self.args[0])[:30])
        close = difflib.get_close_matches(str(self.args[0]), list(BUGS), n=1)
        if not close:
            return f"unknown bug id {named} (--list-bugs lists them)"
        said = f"unknown bug id {named}; did you mean {close[0]!r}?"
        return said if len(said) <= SENTENCE else f"unknown bug id; did you mean {close[0]!r}?"


def get(bug_id: str) -> Bug:
    try:
        return BUGS[bug_id]
    except KeyError:
        raise UnknownBug(bug_id) from None


def explain(result: ScenarioResult) -> tuple[str | None, str | None]:
    """What the oracle stores on a departure when it judges it (``cause_of``, ``refused_by_patch``),
    read from every bug's recogniser and loud patch's refusal: once per run. A bug explains a run in
    its scope only: a named shape of ``Bug.scope``, or a generated model its ``Bug.reach`` holds on; and
    not where its workaround's switches were all on (``Bug.worked_around``): that is the workaround's."""
    cause = next(
        (
            bug.id
            for bug in BUGS.values()
            if bug.covers(result) and bug.recognise(result) and not bug.worked_around(result)
        ),
        None,
    )
    return cause, next((bug.id for bug in BUGS.values() if bug.refuses(result)), None)


def cause_of(result: ScenarioResult) -> str | None:
    """The id of the catalogued bug that explains how this result departs from eager, if one does: as the
    oracle read it when it judged the run, else read now."""
    if result.cause_read or result.verdict not in (Verdict.RAISES, Verdict.DIFFERS):
        return result.cause
    return explain(result)[0]


def refused_by_patch(result: ScenarioResult) -> str | None:
    """The id of the bug whose loud upstream patch raised this run's refusal, if one did (``Bug.refuses``):
    that patch answers for the run, and where the run is in the bug's scope, the bug's status says so. As
    the oracle read it, else read now."""
    if result.cause_read or result.verdict != Verdict.RAISES:
        return result.refused_by
    return explain(result)[1]


def covering(result: ScenarioResult) -> list[str]:
    """The ids of the bugs whose scope holds this scenario run."""
    return [bug.id for bug in BUGS.values() if bug.covers(result)]


@dataclass(frozen=True)
class Selection:
    """What a run runs: ``scenarios``; ``not_run``, the scenarios the default run leaves out (empty when
    ``--slow`` or ``--bug`` chose); ``skipped``, bug id -> why none of its scenarios runs."""

    scenarios: list[Scenario]
    not_run: list[Scenario]
    skipped: dict[str, str]


def select(bug_ids: list[str], slow: bool, also: tuple[str, ...] = ()) -> Selection:
    """The scenarios to run.

    ``bug_ids`` (from ``--bug``) runs exactly those bugs' scenarios, every tier; without it the
    default tier runs (``slow`` adds the others), plus every scenario of a bug in ``also`` (the bug an
    issue body is about: its whole scope, every tier, so that its own cases show), and a bug none of
    whose scenarios runs is skipped with its tier's reason."""
    from repro.engine.scenarios import SCENARIOS

    def in_scope(scenario: Scenario, bugs: list[Bug]) -> bool:
        return any(scenario.apis & set(bug.apis) and (not bug.cases or scenario.name in bug.cases) for bug in bugs)

    chosen = [get(bug_id) for bug_id in bug_ids]
    if chosen:
        return Selection(
            [s for s in [*SCENARIOS, *across_scope(chosen)] if in_scope(s, chosen)],
            [],
            {bug.id: "not asked for (--bug)" for bug in BUGS.values() if bug not in chosen},
        )
    table = [*SCENARIOS, *across_scope(list(BUGS.values()))]
    extra = [get(bug_id) for bug_id in also]
    runs = [s for s in table if slow or s.tier == Tier.DEFAULT or in_scope(s, extra)]
    not_run = [s for s in table if s not in runs]
    skipped = {
        bug.id: _left_out(bug, [s for s in not_run if in_scope(s, [bug])])
        for bug in BUGS.values()
        if not any(in_scope(s, [bug]) for s in runs)
    }
    return Selection(runs, not_run, skipped)


def scope_runs(bug: Bug) -> list[tuple[Scenario, str]]:
    """Every (scenario, style) of the bug's whole scope: each scenario of its APIs (its cases) on each
    shape it declares, in each style, where the scope holds that shape and style."""
    from repro.engine.models import styles_of
    from repro.engine.scenarios import SCENARIOS

    return [
        (scenario.on(shape), style)
        for scenario in SCENARIOS
        if scenario.apis & set(bug.apis) and (not bug.cases or scenario.name in bug.cases)
        for shape in scenario.shapes
        for style in styles_of(shape)
        if (shape, style, "") in bug.scope or (shape, style, scenario.name) in bug.scope
    ]


def proof_runs(bug: Bug) -> list[tuple[Scenario, str]]:
    """Where the bug's workaround is proven: every scenario of its APIs, its ``cases`` or not (a
    workaround changes more than the case it is for), on each (shape, style) of its scope; where the
    workaround writes the cases another way (``Workaround.instead``), that scenario in their place."""
    from repro.engine.models import styles_of
    from repro.engine.scenarios import SCENARIOS

    pairs = {(shape, style) for shape, style, _ in bug.scope}
    instead = bug.workaround.instead if bug.workaround else ""
    runs = [
        (scenario.on(shape), style)
        for scenario in SCENARIOS
        if scenario.apis & set(bug.apis) and not (instead and scenario.name in bug.cases)
        for shape in scenario.shapes
        for style in styles_of(shape)
        if (shape, style) in pairs
    ]
    written = [scenario for scenario in SCENARIOS if instead and scenario.key == instead]
    if instead and not written:
        raise ValueError(f"{bug.id}: its workaround's scenario {instead!r} is not in the table")
    return runs + [
        (scenario.on(shape), style)
        for scenario in written
        for shape in scenario.shapes
        for style in styles_of(shape)
        if style in bug.styles
    ]


def across_scope(bugs: list[Bug]) -> list[Scenario]:
    """One scenario of each bug built on each other shape of its scope, so that a run judges a bug on
    the shapes exploration found it on, not only where its scenarios are built by default."""
    from repro.engine.scenarios import SCENARIOS

    extra: dict[str, Scenario] = {}
    for bug in bugs:
        own = [s for s in SCENARIOS if s.apis & set(bug.apis) and (not bug.cases or s.name in bug.cases)]
        for shape in dict.fromkeys(shape for shape, _, _ in bug.scope):
            cases = {case for where, _, case in bug.scope if where == shape}
            if "" in cases:  # every scenario of the bug holds there: one of them, unless one is built there
                found = [] if any(s.model == shape for s in own) else [s for s in own if shape in s.shapes][:1]
            else:  # only the named cases hold there: each of them (a torch lacking one API still runs the rest)
                found = [s for s in own if s.name in cases and s.model != shape and shape in s.shapes]
            for candidate in found:  # never in the default run: the default tier keeps one shape per scenario
                moved = replace(
                    candidate.on(shape), tier=Tier.VARIANT if candidate.tier == Tier.DEFAULT else candidate.tier
                )
                extra.setdefault(moved.key, moved)
    return list(extra.values())


def _left_out(bug: Bug, scenarios: list[Scenario]) -> str:
    """Why a bug is skipped: the default run leaves out all its scenarios, for their tiers' reasons."""
    from repro.engine.scenarios import TIERS

    kinds = " or ".join(sorted({"{} ({})".format(*TIERS[s.tier]) for s in scenarios}))
    return f"its scenarios are {kinds}, left out of the default run: --slow or --bug {bug.id} runs them"


def steps(bug: Bug) -> list[str]:
    """``bug``'s cause as numbered steps, measured on the installed torch from its catalogue module; a
    bug without one gives its static signature's evidence, file:line each."""
    from repro.source_checks import installed_sources

    evidence = bug.static(installed_sources()).evidence
    if bug.root_cause is None:
        return evidence
    try:
        return bug.root_cause(evidence)
    except Exception as err:  # a torch that refuses what the measurement does (a loud upstream patch)
        said = (str(err).splitlines() or [""])[0].rstrip(".")
        return [
            *evidence,
            f"Measuring the cause raised {type(err).__name__}: {said}. This torch does not behave as the "
            "bug describes, so its cause is not measured here.",
        ]
