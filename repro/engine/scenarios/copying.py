"""Copying and pickling a model: what users do to snapshot or ship one (EMA weights, checkpoints)."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from repro.engine.recorder import Recorder, changed_classes
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
    requires=("params",),  # on an eager parent too: its copy copies the child under test
)
def _(m: Any, rec: Recorder) -> None:
    duplicate = copy.deepcopy(m)
    rec.facts["the copy's class"] = type(duplicate).__name__
    rec.facts["copy's parameters that are not leaves"] = sorted(
        name for name, p in duplicate.named_parameters() if not p.is_leaf
    )
    rec.facts["the copy's children of another class"] = changed_classes(m, duplicate)
    duplicate(rec.input(), *rec.extra(rec.device)).sum().backward()
    rec.facts["copy's grads set"] = sorted(name for name, p in duplicate.named_parameters() if p.grad is not None)
    rec.facts["original's grads set"] = sorted(name for name, p in m.named_parameters() if p.grad is not None)


@scenario(
    "copy.copy",
    "re-assigning a parameter on the copy or the original reaches both (shared _parameters)",
    tier=Tier.VARIANT,
    where="a parameter re-assigned",
    requires=("root", "x only", "own params"),
)
def _(m: Any, rec: Recorder) -> None:
    duplicate = copy.copy(m)
    with torch.no_grad():
        duplicate.weight = nn.Parameter(m.weight * 2.0)
        m.bias = nn.Parameter(m.bias - 1.0)
    for name, model in (("the original", m), ("the copy", duplicate)):
        rec.note(f"{name}'s weight and bias", [model.weight, model.bias])
        rec.note(f"{name}'s output", model(rec.input()))
