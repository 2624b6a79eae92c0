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

from repro.catalogue import cause_of
from repro.catalogue.bug import Bug
from repro.engine.models import INSTANCES, STYLES, forget_built_classes, styles_of
from repro.engine.oracle import ScenarioResult, run_scenario
from repro.engine.scenarios import SCENARIOS

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

    def failures(self) -> list[ScenarioResult]:
        """The runs that depart through this bug, or in a way no catalogued bug explains."""
        return [r for r in self.results if r.verdict not in NEUTRAL and cause_of(r) in (None, self.bug.id)]

    @property
    def works(self) -> bool:
        return bool(self.results) and not self.failures()

    def summary(self) -> str:
        """One line: how many runs match, and where the rest went."""
        matched = sum(r.verdict == "match" for r in self.results)
        others = sorted({cause for _, cause in self.elsewhere()})
        parts = [f"{matched} of {len(self.results)} runs of its scope match eager"]
        refused = sum(r.verdict == "refused" for r in self.results)
        if refused:
            parts.append(f"{refused} refused by design")
        if others:
            parts.append(f"{len(self.elsewhere())} depart through {', '.join(others)}")
        if self.failures():
            parts.append(f"{len(self.failures())} still depart")
        return "; ".join(parts)


def prove(bug: Bug, device: str = "cpu") -> Proof:
    """Run ``bug``'s scope with its workaround in force (none: as it is) and judge every run."""
    workaround = bug.workaround
    in_force = workaround.apply() if workaround and workaround.apply else contextlib.nullcontext()
    runs = [
        (scenario, style, instance)
        for scenario in SCENARIOS
        if scenario.apis & set(bug.apis)
        and scenario.model in bug.models
        and (not bug.cases or scenario.name in bug.cases)
        for style in styles_of(scenario.model)
        if style in bug.styles
        for instance in INSTANCES
    ]
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
