"""The catalogue of known upstream bugs, as data: one module per bug, and this registry.

Each bug says which scenarios it covers (APIs and subclass styles), how to recognise its
departure in an oracle result, its static signature over torch's sources (for the tracker),
and two scripts: a bisect-ready one and a paste-ready one. ``by_design`` lists what
TorchScript refuses on purpose, which is not a bug.
"""

from __future__ import annotations

from repro.catalogue import (full_backward_hook_flag, global_backward_hooks_scripted, global_hooks_root_only,
                             module_compile_noop)
from typing import TYPE_CHECKING

from repro.catalogue.bug import Bug

if TYPE_CHECKING:  # the engine imports torch; the tracker reads the catalogue without it
    from repro.engine.oracle import ScenarioResult
    from repro.engine.scenarios import Scenario

BUGS: dict[str, Bug] = {module.BUG.id: module.BUG for module in (
    full_backward_hook_flag, global_backward_hooks_scripted, global_hooks_root_only, module_compile_noop)}


class UnknownBug(KeyError):
    """An id the catalogue does not hold (one sentence; CLI exit code 2)."""

    def __str__(self) -> str:
        return f"no catalogued bug {self.args[0]!r}; known: {', '.join(BUGS)}"


def get(bug_id: str) -> Bug:
    try:
        return BUGS[bug_id]
    except KeyError:
        raise UnknownBug(bug_id) from None


def cause_of(result: ScenarioResult) -> str | None:
    """The id of the catalogued bug that explains how this result departs from eager, if one does."""
    if result.verdict not in ("raises", "differs"):
        return None
    return next((bug.id for bug in BUGS.values() if bug.covers(result) and bug.recognise(result)), None)


def covering(result: ScenarioResult) -> list[str]:
    """The ids of the bugs whose scope holds this scenario run."""
    return [bug.id for bug in BUGS.values() if bug.covers(result)]


def select(bug_ids: list[str], slow: bool) -> tuple[list[Scenario], dict[str, str]]:
    """The scenarios to run, and why each bug left out is skipped.

    ``bug_ids`` (from ``--bug``) runs exactly those bugs' scenarios, slow ones included; without
    it every scenario runs except slow ones (``slow`` adds them), and a bug whose scope holds only
    slow scenarios is skipped with that reason."""
    from repro.engine.scenarios import SCENARIOS

    chosen = [get(bug_id) for bug_id in bug_ids]
    if chosen:
        scenarios = [s for s in SCENARIOS if any(s.apis & set(bug.apis) for bug in chosen)]
        return scenarios, {bug.id: "not asked for (--bug)" for bug in BUGS.values() if bug not in chosen}
    scenarios = [s for s in SCENARIOS if slow or not s.slow]
    skipped = {bug.id: "its scenarios take seconds (Module.compile imports dynamo): --slow or --bug "
               f"{bug.id} runs them" for bug in BUGS.values()
               if not any(s.apis & set(bug.apis) for s in scenarios)}
    return scenarios, skipped
