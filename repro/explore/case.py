"""One generated case, run on both twins: the model's two texts imported afresh, the steps done on
each, every step's observation (and error) recorded apart, and the first step where the twins part.

A case restores what is process-wide (global hooks and the full/legacy mode they set, the switches
its steps put on, the RNG seed it sets) so that cases do not leak into each other: the same case
gives the same observations whatever ran before it.
"""

from __future__ import annotations

import sys
import warnings
from dataclasses import dataclass
from typing import Any

from repro import ctrl_c
from repro.explore.generate import Base, ModelSpec, source
from repro.explore.loading import forget, loaded
from repro.explore.steps import State, Step, perform


@dataclass(frozen=True)
class Case:
    spec: ModelSpec
    steps: tuple[Step, ...]
    later: bool  # a later instance of each class (one was built and dropped first), not the first


@dataclass(frozen=True)
class Twin:
    """What one twin did: per step, its observation, and the error it raised, if any."""

    built: str | None  # the error building it raised, if any
    steps: tuple[dict[str, Any], ...]
    errors: tuple[str | None, ...]


def run_twin(case: Case, scripted: bool) -> Twin:
    """The case's steps on one twin, each observed apart; a step that raises does not stop the rest."""
    from repro.engine.scenarios.hooks import global_backward_mode_kept

    module = loaded(source(case.spec, scripted), "scripted" if scripted else "eager")
    # what torch warns of is not an observation; a Ctrl-C never is, even one TorchScript made an error;
    # removing a case's global hooks leaves torch's full/legacy mode of them, put back here
    with warnings.catch_warnings(), ctrl_c.kept(), global_backward_mode_kept():
        warnings.simplefilter("ignore")
        return _steps(case, scripted, module)


def _steps(case: Case, scripted: bool, module: Any) -> Twin:
    """Build the twin from ``module``, do each step; afterwards, global hooks removed, switches off,
    the seed reset and the module forgotten."""
    import torch

    from repro.engine.oracle import describe_error
    from repro.engine.recorder import Recorder

    state = None
    try:
        try:
            model = _built(module, case, scripted)
        except Exception as err:
            return Twin(describe_error(err), (), ())
        state = State(model, Recorder(model, "cpu"), case.spec.features, case.spec.batch, [])
        paths = case.spec.paths()
        observed, errors = [], []
        for step in case.steps:
            state.rec.facts, state.rec.events, state.rec.types = {}, [], {}  # this step's alone
            error = None
            try:
                perform(step, state, paths)
            except Exception as err:  # the error is the observation
                error = describe_error(err)
            observed.append(state.rec.observation())
            errors.append(error)
        return Twin(None, tuple(observed), tuple(errors))
    finally:
        for handle in state.handles if state else ():
            handle.remove()
        if state:
            state.switches.close()
        torch.manual_seed(0)
        if "torch._dynamo" in sys.modules:  # what dynamo cached for this case must not serve the next
            sys.modules["torch._dynamo"].reset()
        forget(module)


def _built(module: Any, case: Case, scripted: bool) -> Any:
    """The root, its values rounded to eighths (exact in every dtype the steps use), both twins built
    from the same seed."""
    import torch

    def build() -> Any:
        torch.manual_seed(0)
        root = module.Root()
        if scripted and case.spec.root.base is Base.SCRIPTED_EAGER:
            root = torch.jit.script(root)
        with torch.no_grad():
            for tensor in [*root.parameters(), *root.buffers()]:
                tensor.copy_(torch.round(tensor * 8) / 8)
        return root

    if case.later:
        build()
    return build()


def parting(scripted: Twin, eager: Twin) -> int | None:
    """The first step (1-based) where the twins' observations or errors differ; 0 where only one of
    them could be built; None where they never part."""
    if (scripted.built is None) != (eager.built is None):
        return 0
    for number, pair in enumerate(zip(scripted.steps, eager.steps), start=1):
        if pair[0] != pair[1] or scripted.errors[number - 1] != eager.errors[number - 1]:
            return number
    return None
