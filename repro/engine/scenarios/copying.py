"""Copying and pickling a model: what users do to snapshot or ship one (EMA weights, checkpoints)."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

from repro.engine.recorder import Recorder
from repro.engine.scenarios.table import scenario
from repro.vocabulary import Tier


def _copied(copier: Callable[[Any], Any]) -> Callable[[Any, Any], None]:
    """A body: register a forward hook, copy the model with ``copier``, run the copy."""

    def body(m: Any, rec: Recorder) -> None:
        m.register_forward_hook(rec.mark("forward hook, registered before the copy"))
        duplicate = copier(m)
        rec.facts["the copy's class"] = type(duplicate).__name__
        rec.note("the copy's output", duplicate(rec.input(), *rec.extra(rec.device)))

    return body


scenario("copy.deepcopy", "keeps the class and the hooks; the copy runs")(_copied(copy.deepcopy))
scenario("copy.copy", "keeps the class and the hooks; the copy runs")(_copied(copy.copy))


@scenario(
    "pickle.dumps",
    "round-trips through pickle; the copy runs",
    "pickle.loads",
    tier=Tier.VARIANT,
    requires=("root", "x only"),
)
def _(m: Any, rec: Recorder) -> None:
    duplicate = pickle.loads(pickle.dumps(m))
    rec.note("the copy's output", duplicate(rec.input()))


@scenario("copy.copy", "eval() on the copy leaves the original in training mode")  # its bug's default
def _(m: Any, rec: Recorder) -> None:
    duplicate = copy.copy(m)
    duplicate.eval()
    rec.facts["original training"] = m.training
    rec.facts["copy training"] = duplicate.training


@scenario(
    "copy.deepcopy",
    "backward through the copy fills the copy's gradients",
    tier=Tier.VARIANT,
    requires=("root", "params"),
)
def _(m: Any, rec: Recorder) -> None:
    duplicate = copy.deepcopy(m)
    rec.facts["the copy's class"] = type(duplicate).__name__
    duplicate(rec.input(), *rec.extra(rec.device)).sum().backward()
    rec.facts["copy's grads set"] = sorted(name for name, p in duplicate.named_parameters() if p.grad is not None)
    rec.facts["original's grads set"] = sorted(name for name, p in m.named_parameters() if p.grad is not None)
