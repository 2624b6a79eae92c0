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
from repro.engine.by_design import DESIGNED, UNDOCUMENTED
from repro.engine.models import INSTANCES, STYLES
from repro.engine.oracle import ScenarioResult, eager_twin, run_scenario
from repro.vocabulary import ProofStatus, Verdict

NEUTRAL = (Verdict.MATCH, Verdict.REFUSED, Verdict.UNAVAILABLE, Verdict.NOT_RUN)


@dataclass(frozen=True)
class Proof:
    bug: Bug
    results: list[ScenarioResult]
    absent: str = ""  # why the workaround cannot be applied on this torch (its switch is not there)

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

    def observed(self) -> list[ScenarioResult]:
        """The runs that show the workaround doing its job: they match eager, or differ from it only as
        TorchScript's design says (a compiled child's class), every other observation equal."""
        return [r for r in self.results if r.verdict == Verdict.MATCH or _differs_by_design(r)]

    @property
    def works(self) -> bool:
        """Some run was observed to behave as eager with it in force, and none departs through this bug
        or unexplained outside its limits: a scope this torch cannot run (every API absent, or every call
        refused) proves nothing."""
        return bool(self.observed()) and not self.failures()

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
            "workaround": found.name if found else "none",
            "runs": len(self.results),
            "matched": sum(r.verdict == Verdict.MATCH for r in self.results),
            "summary": self.summary(),
        }

    def summary(self) -> str:
        """One line: how many runs match, and where the rest went."""
        if self.absent:
            return f"not measured: this torch cannot apply it ({self.absent})"
        matched = sum(r.verdict == Verdict.MATCH for r in self.results)
        others = sorted({cause for _, cause in self.elsewhere()})
        parts = [f"{matched} of {len(self.results)} runs of its scope match eager"]
        differ = sum(_differs_by_design(r) for r in self.results)
        designed = sum(r.verdict == Verdict.REFUSED and f"({DESIGNED}: " in r.detail for r in self.results) - differ
        undocumented = sum(r.verdict == Verdict.REFUSED and f"({UNDOCUMENTED}: " in r.detail for r in self.results)
        if differ:
            parts.append(f"{differ} differ from it only by design (a compiled child's class)")
        if designed:
            parts.append(f"{designed} refused by design")
        if undocumented:
            parts.append(f"{undocumented} refused, undocumented")
        if others:
            parts.append(f"{len(self.elsewhere())} depart through {', '.join(others)}")
        if self.limited():
            parts.append(f"{len(self.limited())} depart where it declares it does not work")
        if self.failures():
            parts.append(f"{len(self.failures())} still depart")
        return "; ".join(parts)


def _differs_by_design(result: ScenarioResult) -> bool:
    raised = result.scripted is None or result.scripted.error
    return result.verdict == Verdict.REFUSED and f"({DESIGNED}: " in result.detail and not raised


def prove(bug: Bug, device: str = "cpu") -> Proof:
    """Run ``bug``'s scope with its workaround in force (none: as it is) and judge every run."""
    workaround = bug.workaround
    try:
        in_force = workaround.apply() if workaround and workaround.apply else contextlib.nullcontext()
    except (ImportError, AttributeError) as err:  # a switch a release lacks (set_checkpoint_early_stop < 2.1)
        return Proof(bug, [], absent=f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}")
    runs = [(scenario, style, instance) for scenario, style in scope_runs(bug) for instance in INSTANCES]
    with warnings.catch_warnings(), in_force:  # every run builds its classes anew, under the workaround
        warnings.simplefilter("ignore")  # TorchScript's deprecation warnings: the report shows them
        scenarios = {s.key: s for s, _, _ in runs}
        twins = {key: eager_twin(s, device) for key, s in scenarios.items()}  # once each, as the report does
        results = [
            run_scenario(s, _style(bug, style), device, instance, twins[s.key], explains=cause_of)
            for s, style, instance in runs
        ]
    return Proof(bug, results)


def _style(bug: Bug, style: str) -> str:
    """The style a run takes under the workaround: its own, or the workaround's for a subclass style."""
    changed = bug.workaround.style if bug.workaround else ""
    return changed if changed and style in STYLES else style
