"""A workaround proven: the bug's whole scope run with it in force, every run judged against eager.

A run counts for the workaround when it matches eager, is refused by TorchScript's design, or
cannot run on this torch or machine (``unavailable``, ``not-run``); a run that departs through
another catalogued bug counts neither way and is named. The workaround works when no run departs
through this bug or in a way no catalogued bug explains. The runs are those ``python -m repro``
makes for the bug (each scenario of its scope, in each of its styles, on a first and a later
instance), in the workaround's style where it changes how ``forward`` is written.
"""

from __future__ import annotations

import contextlib
import warnings
from dataclasses import dataclass

from repro.catalogue import cause_of, scope_runs
from repro.catalogue.bug import Bug
from repro.engine.models import INSTANCES, STYLES, forget_built_classes
from repro.engine.oracle import ScenarioResult, run_scenario

NEUTRAL = ("match", "refused", "unavailable", "not-run")


@dataclass(frozen=True)
class Proof:
    bug: Bug
    results: list[ScenarioResult]

    def elsewhere(self) -> list[tuple[ScenarioResult, str]]:
        """The runs that depart through another catalogued bug, with its id."""
        return [
            (r, cause)
            for r in self.results
            if r.verdict not in NEUTRAL and (cause := cause_of(r)) not in (None, self.bug.id)
        ]

    def _departing(self) -> list[ScenarioResult]:
        return [r for r in self.results if r.verdict not in NEUTRAL and cause_of(r) in (None, self.bug.id)]

    def _limit(self, result: ScenarioResult) -> bool:
        limits = self.bug.workaround.limits if self.bug.workaround else ()
        return (result.scenario.model, result.style) in limits

    def failures(self) -> list[ScenarioResult]:
        """The runs that depart through this bug, or in a way no catalogued bug explains, outside the
        workaround's declared limits."""
        return [r for r in self._departing() if not self._limit(r)]

    def limited(self) -> list[ScenarioResult]:
        """The runs that depart on a (shape, style) the workaround declares it does not cover."""
        return [r for r in self._departing() if self._limit(r)]

    @property
    def works(self) -> bool:
        return bool(self.results) and not self.failures()

    def summary(self) -> str:
        """One line: how many runs match, and where the rest went."""
        matched = sum(r.verdict == "match" for r in self.results)
        others = sorted({cause for _, cause in self.elsewhere()})
        parts = [f"{matched} of {len(self.results)} runs of its scope match eager"]
        designed = sum(r.verdict == "refused" and "(by design: " in r.detail for r in self.results)
        undocumented = sum(r.verdict == "refused" and "(undocumented: " in r.detail for r in self.results)
        if designed:
            parts.append(f"{designed} differ or are refused by design")
        if undocumented:
            parts.append(f"{undocumented} refused, undocumented")
        if others:
            parts.append(f"{len(self.elsewhere())} depart through {', '.join(others)}")
        if self.limited():
            parts.append(f"{len(self.limited())} depart where it declares it does not work")
        if self.failures():
            parts.append(f"{len(self.failures())} still depart")
        return "; ".join(parts)


def prove(bug: Bug, device: str = "cpu") -> Proof:
    """Run ``bug``'s scope with its workaround in force (none: as it is) and judge every run."""
    workaround = bug.workaround
    in_force = workaround.apply() if workaround and workaround.apply else contextlib.nullcontext()
    runs = [(scenario, style, instance) for scenario, style in scope_runs(bug) for instance in INSTANCES]
    forget_built_classes()  # no class compiled before the workaround serves a run under it
    try:
        with warnings.catch_warnings(), in_force:
            warnings.simplefilter("ignore")  # TorchScript's deprecation warnings: the report shows them
            results = [run_scenario(s, _style(bug, style), device, instance) for s, style, instance in runs]
    finally:
        forget_built_classes()
    return Proof(bug, results)


def _style(bug: Bug, style: str) -> str:
    """The style a run takes under the workaround: its own, or the workaround's for a subclass style."""
    changed = bug.workaround.style if bug.workaround else ""
    return changed if changed and style in STYLES else style
