"""A workaround proven as a fix is: every call of every run in its space judged against eager.

Its space: every scenario of the bug's APIs (not only the bug's own cases) on each (shape, style)
of the bug's scope, on the first instance of a fresh class and on a later one, at each size of
``repro.engine.models.SIZES`` (batch and features equal, different, both 1), each body called three
times on one model (``repro.engine.calls``). A call is compared with the eager twin's same call:
what the body notes (outputs and their dtypes, hook calls, state), the gradient of every parameter,
buffer and input, and the exception. The workaround is put in force around each run alone and
taken off after it, so a process-wide switch never leaks into the next run or the next proof.

Verdict (``WorkaroundVerdict``): ``holds`` where every judged call matches eager or differs only by
TorchScript's design; ``loud`` where a call still raises; ``silently wrong`` where a value, gradient,
dtype or hook call differs without an error. A call that departs through another catalogued bug is
that bug's and named, and counts neither way; one where the eager twin itself raises beyond the
report's own run (a scenario written for 2 x 2 inputs, called at 1 x 1) is not valid there. The
(shape, style) pairs a workaround declares as its limits are where it must not be used: their
departures are shown apart, with what happens there.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from repro.catalogue import cause_of, explain, proof_runs
from repro.catalogue.bug import Bug
from repro.engine.by_design import DESIGNED, UNDOCUMENTED
from repro.engine.calls import CALLS, eager_calls, run_calls
from repro.engine.models import INSTANCES, SIZE, SIZES, STYLES
from repro.engine.oracle import ScenarioResult, not_runnable
from repro.engine.scenarios import Scenario
from repro.vocabulary import ProofStatus, Verdict, WorkaroundVerdict

NEUTRAL = (Verdict.MATCH, Verdict.REFUSED, Verdict.UNAVAILABLE, Verdict.NOT_RUN)
COMPARED = "outputs and their dtypes, every gradient (parameters, buffers, inputs), hook calls, exceptions"


@dataclass(frozen=True)
class Proof:
    bug: Bug
    results: list[ScenarioResult]
    absent: str = ""  # why the workaround cannot be applied on this torch (its switch is not there)
    torch: str = ""  # the torch it ran on

    @cached_property
    def _causes(self) -> list[str | None]:
        """Per call, the catalogued bug its departure is (``cause_of``): asked once, read by every count."""
        return [cause_of(r) if r.verdict not in NEUTRAL else None for r in self.results]

    def elsewhere(self) -> list[tuple[ScenarioResult, str]]:
        """The calls that depart through another catalogued bug, with its id."""
        return [(r, cause) for r, cause in zip(self.results, self._causes) if cause not in (None, self.bug.id)]

    def invalid(self) -> list[ScenarioResult]:
        """The calls where the eager twin itself raised beyond the report's own run: the scenario does
        not hold there (written for 2 x 2 inputs, or for one call), so nothing is judged."""
        return [r for r in self.results if _invalid(r)]

    def _departing(self) -> list[ScenarioResult]:
        return [
            r
            for r, cause in zip(self.results, self._causes)
            if r.verdict not in NEUTRAL and cause in (None, self.bug.id) and not _invalid(r)
        ]

    def _limit(self, result: ScenarioResult) -> bool:
        limits = self.bug.workaround.limits if self.bug.workaround else ()
        return (result.scenario.model, result.style) in limits

    def failures(self) -> list[ScenarioResult]:
        """The calls that depart through this bug, or in a way no catalogued bug explains, outside the
        workaround's declared limits."""
        return [r for r in self._departing() if not self._limit(r)]

    def limited(self) -> list[ScenarioResult]:
        """The calls that depart on a (shape, style) the workaround declares it does not cover."""
        return [r for r in self._departing() if self._limit(r)]

    def observed(self) -> list[ScenarioResult]:
        """The calls that show the workaround doing its job: they match eager, or differ from it only as
        TorchScript's design says (a compiled child's class), every other observation equal."""
        return [r for r in self.results if r.verdict == Verdict.MATCH or _differs_by_design(r)]

    @property
    def works(self) -> bool:
        """Some call was observed to behave as eager with it in force, and none departs through this bug
        or unexplained outside its limits: a scope this torch cannot run (every API absent, or every call
        refused) proves nothing."""
        return bool(self.observed()) and not self.failures()

    @property
    def verdict(self) -> WorkaroundVerdict | None:
        """Outside its declared limits: ``silently wrong``, ``loud`` or ``holds``; None where there is no
        workaround, or nothing was observed (``not-measured``)."""
        if self.status in (ProofStatus.NONE, ProofStatus.NOT_MEASURED):
            return None
        return _verdict(self.failures())

    @property
    def within_limits(self) -> WorkaroundVerdict | None:
        """What it does where it declares it must not be used; None where nothing departs there."""
        return _verdict(self.limited()) if self.limited() else None

    @property
    def status(self) -> ProofStatus:
        """One of ``repro.ledger.WORKAROUND_STATUSES``: what the ledger records and the support table reads."""
        found = self.bug.workaround
        if found is None or found.apply is None:
            return ProofStatus.NONE
        if self.failures():
            return ProofStatus.DOES_NOT_WORK
        if not self.works:
            return ProofStatus.NOT_MEASURED
        return ProofStatus.WORKS_WITH_LIMITS if self.limited() else ProofStatus.WORKS

    def as_dict(self) -> dict[str, object]:
        """What ``--workarounds --json`` prints per bug and the tracker records per release."""
        found = self.bug.workaround
        return {
            "id": self.bug.id,
            "status": self.status,
            "verdict": self.verdict or "",
            "workaround": found.name if found else "none",
            "runs": len(self.results),
            "matched": sum(r.verdict == Verdict.MATCH for r in self.results),
            "summary": self.summary(),
            "space": self.space(),
        }

    def space(self) -> str:
        """What it held on: the calls, instances, sizes, shapes and styles run, what was compared, and
        on which torch; or why nothing ran."""
        if self.absent:
            return f"nothing: this torch cannot apply it ({self.absent})"
        if not self.results:
            return "nothing: its scope holds no scenario"
        shapes = sorted({r.scenario.model for r in self.results})  # "in eager parent, with child" has a comma
        styles = sorted({r.style for r in self.results})
        scenarios = len({r.scenario.key for r in self.results})
        return (
            f"calls 1-{CALLS} of a first and a later instance, sizes {', '.join(map(str, SIZES))} "
            f"(batch x features), {scenarios} scenarios on {len(shapes)} shapes ({'; '.join(shapes)}) in "
            f"{' and '.join(styles)}; compared: {COMPARED}; torch {self.torch}"
        )

    def summary(self) -> str:
        """One line: how many calls match, and where the rest went."""
        if self.absent:
            return f"not measured: this torch cannot apply it ({self.absent})"
        matched = sum(r.verdict == Verdict.MATCH for r in self.results)
        others = sorted({cause for _, cause in self.elsewhere()})
        parts = [f"{matched} of {len(self.results)} calls match eager"]
        differ = sum(_differs_by_design(r) for r in self.results)
        designed = sum(r.verdict == Verdict.REFUSED and f"({DESIGNED}: " in r.detail for r in self.results) - differ
        undocumented = sum(r.verdict == Verdict.REFUSED and f"({UNDOCUMENTED}: " in r.detail for r in self.results)
        if differ:
            parts.append(f"{differ} differ from it only by design (a compiled child's class)")
        if designed:
            parts.append(f"{designed} refused by design")
        if undocumented:
            parts.append(f"{undocumented} refused, undocumented")
        if self.invalid():
            parts.append(f"{len(self.invalid())} not valid (eager raised)")
        if others:
            parts.append(f"{len(self.elsewhere())} depart through {', '.join(others)}")
        if self.limited():
            parts.append(f"{_counted(self.limited())} where it declares it must not be used")
        if self.failures():
            found = self.bug.workaround
            meant = "where it is meant to work" if found and found.apply else "with nothing in force"
            parts.append(f"{_counted(self.failures())} {meant}")
        return "; ".join(parts)


def _invalid(result: ScenarioResult) -> bool:
    return result.verdict == Verdict.ERROR and (result.size != SIZE or result.call > 1)


def _verdict(departing: list[ScenarioResult]) -> WorkaroundVerdict:
    if any(r.verdict == Verdict.DIFFERS for r in departing):
        return WorkaroundVerdict.SILENTLY_WRONG
    return WorkaroundVerdict.LOUD if departing else WorkaroundVerdict.HOLDS


def _counted(runs: list[ScenarioResult]) -> str:
    """ "3 silently wrong, 2 raise": the departing calls by kind."""
    silent = sum(r.verdict == Verdict.DIFFERS for r in runs)
    kinds = [f"{silent} silently wrong" if silent else "", f"{len(runs) - silent} raise" if len(runs) > silent else ""]
    return ", ".join(k for k in kinds if k)


def _differs_by_design(result: ScenarioResult) -> bool:
    raised = result.scripted is None or result.scripted.error
    return result.verdict == Verdict.REFUSED and f"({DESIGNED}: " in result.detail and not raised


def prove(bug: Bug, device: str = "cpu") -> Proof:
    """Run the workaround's space with it in force around each run (none: as it is) and judge every call."""
    import torch

    workaround = bug.workaround
    apply: Callable[[], AbstractContextManager[Any]] = (
        workaround.apply if workaround and workaround.apply else contextlib.nullcontext
    )
    try:
        with apply():
            pass
    except (ImportError, AttributeError) as err:  # a switch a release lacks (set_checkpoint_early_stop < 2.1)
        said = str(err).splitlines()[0] if str(err) else ""
        return Proof(bug, [], absent=f"{type(err).__name__}: {said}", torch=torch.__version__)
    results: list[ScenarioResult] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TorchScript's deprecation warnings: the report shows them
        for scenario, styles in _grouped(proof_runs(bug)):
            runnable = not_runnable(scenario, "", "") is None  # this torch has its APIs, this machine its device
            for size in SIZES if runnable else SIZES[:1]:  # a run that cannot be made is one result
                with apply():  # the eager twin's calls, once for all of its runs, as the report's
                    eager = eager_calls(scenario, device, size) if runnable else []
                for style in styles:
                    for instance in INSTANCES:
                        with apply():  # every run builds its classes anew, under the workaround alone
                            results += run_calls(
                                scenario, _style(bug, style), device, instance, size, eager, explains=explain
                            )
    return Proof(bug, results, torch=torch.__version__)


def _grouped(runs: list[tuple[Scenario, str]]) -> list[tuple[Scenario, list[str]]]:
    """Each scenario once, with the styles it runs in: its eager twin is observed once for them all."""
    grouped: dict[str, tuple[Scenario, list[str]]] = {}
    for scenario, style in runs:
        grouped.setdefault(scenario.key, (scenario, []))[1].append(style)
    return list(grouped.values())


def _style(bug: Bug, style: str) -> str:
    """The style a run takes under the workaround: its own, or the workaround's for a subclass style."""
    changed = bug.workaround.style if bug.workaround else ""
    return changed if changed and style in STYLES else style
