"""Hooks and state set at points in a module's life other than right after construction: inside
``__init__`` (before and after its children are set), after a first forward, after ``eval()`` or
``train()``, and on a ``copy.copy``. Each body then calls the model twice (a first and a later call)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import torch

from repro.engine.recorder import Recorder
from repro.engine.scenarios.table import scenario
from repro.vocabulary import Tier

CALLS = ("first call", "later call")


@scenario(
    "register_forward_hook",
    "a forward hook and pre-hook registered in __init__ change every call's output",
    "register_forward_pre_hook",
    tier=Tier.VARIANT,
    where="registered in __init__",
    model="hooked in __init__, before children",
    requires=("hooked in __init__",),
)
def _(m: Any, rec: Recorder) -> None:
    for call in CALLS:
        rec.note(f"{call}: output", m(rec.input()))
    m.register_forward_hook(rec.mark("forward hook registered after construction"))
    rec.note("with one more hook: output", m(rec.input()))


def _then_hooked(point: Callable[[Any, Any], None]) -> Callable[[Any, Any], None]:
    """A body: ``point`` (a moment in the model's life), then a forward hook and pre-hook registered,
    the buffer re-assigned, and two calls."""

    def body(m: Any, rec: Recorder) -> None:
        point(m, rec)
        m.register_forward_pre_hook(rec.mark("forward pre-hook"))
        m.register_forward_hook(rec.hook("forward hook"))
        m.steps = torch.full((1,), 7.0, device=rec.device)
        for call in CALLS:
            rec.note(f"{call}: output", m(rec.input()))
        rec.facts["training"] = m.training
        rec.note("state_dict", m.state_dict())

    return body


for _point, _name, _do in (
    ("a first forward", "after a first forward", lambda m, rec: m(rec.input())),
    ("eval()", "after eval()", lambda m, rec: m.eval()),
    ("train()", "after eval() then train()", lambda m, rec: m.eval().train()),
):
    scenario(
        "register_forward_hook",
        f"hooks registered and a buffer re-assigned {_name} act on later calls",
        "register_forward_pre_hook",
        tier=Tier.VARIANT,
        where=f"registered {_name}",
        requires=("root", "x only", "own buffer"),
    )(_then_hooked(_do))


@scenario(
    "copy.copy",
    "a forward hook registered on a copy.copy runs for the copy, as eager's (hooks shared with the original)",
    "register_forward_hook",
    tier=Tier.VARIANT,
    where="hooked after the copy",
    requires=("root", "x only"),
)
def _(m: Any, rec: Recorder) -> None:
    duplicate = copy.copy(m)
    duplicate.register_forward_hook(rec.mark("forward hook registered on the copy"))
    for call in CALLS:
        rec.note(f"{call}: the copy's output", duplicate(rec.input()))
        rec.note(f"{call}: the original's output", m(rec.input()))


@scenario(
    "torch.Tensor.mul_",
    "a parameter changed in place after a first forward changes later outputs",
    tier=Tier.VARIANT,
    requires=("root", "x only", "own params"),
)
def _(m: Any, rec: Recorder) -> None:
    for call in CALLS:
        rec.note(f"{call}: output", m(rec.input()))
        with torch.no_grad():
            m.weight.mul_(2.0)
