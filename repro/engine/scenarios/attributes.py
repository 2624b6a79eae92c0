"""The attribute protocol: assigning and deleting parameters, buffers, children and plain values.

``ScriptModule.__setattr__`` forwards assignments to the compiled module, which types each attribute
from its first value: these scenarios compare what then happens with what ``nn.Module`` does. Where
eager itself refuses (a plain tensor assigned to a parameter), the refusal is noted, not raised, so
both twins' answers are compared.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from repro.engine.recorder import Recorder
from repro.engine.scenarios.table import scenario
from repro.vocabulary import Tier

# What a scenario touching each attribute needs of a shape (repro.engine.models.TRAITS).
_NEEDS = {"weight": ("own params",), "steps": ("own buffer",), "linear": ("linear",)}


def _assigned(m: Any, rec: Recorder, name: str, value_of: Callable[[], Any]) -> None:
    setattr(m, name, value_of())
    rec.note(name, getattr(m, name))
    rec.facts[f"{name}'s type"] = type(getattr(m, name)).__name__  # 0 == False: the type tells them apart


for _name, _what, _value, _model in (
    ("weight", "a parameter to None", lambda: None, "flat"),
    ("weight", "a parameter to a new nn.Parameter", lambda: nn.Parameter(torch.ones(2, 2)), "flat"),
    ("steps", "a buffer to None", lambda: None, "flat"),
    ("steps", "a buffer to a new tensor", lambda: torch.full((1,), 7.0), "flat"),
    ("linear", "a child to a new eager module", lambda: nn.Linear(2, 2), "child"),
    ("linear", "a child to None", lambda: None, "child"),
    ("label", "a new plain attribute", lambda: "a note", "flat"),
    ("training", "training to 0 (stored as given)", lambda: 0, "flat"),
):

    def _set(m: Any, rec: Recorder, name: str = _name, value: Callable[[], Any] = _value) -> None:
        _assigned(m, rec, name, value)

    scenario(
        "setattr",
        f"assigns {_what}",
        tier=Tier.DEFAULT if _what.endswith("to None") else Tier.VARIANT,
        model=_model,
        called=False,
        where=_what.split(" (")[0],
        requires=_NEEDS.get(_name, ()),
    )(_set)


@scenario(
    "setattr",
    "assigns a new nn.Parameter under a new name",
    tier=Tier.VARIANT,
    called=False,
    where="a new parameter",
)
def _(m: Any, rec: Recorder) -> None:
    m.extra = nn.Parameter(torch.ones(1))
    rec.note("parameters", [name for name, _ in m.named_parameters()])


@scenario(
    "setattr",
    "assigns a new eager child under a new name",
    tier=Tier.VARIANT,
    called=False,
    where="a new child",
)
def _(m: Any, rec: Recorder) -> None:
    m.extra = nn.Identity()
    rec.note("children", [name for name, _ in m.named_children()])


@scenario(
    "setattr",
    "assigns a plain tensor to a parameter (eager refuses)",
    tier=Tier.VARIANT,
    called=False,
    where="a plain tensor to a parameter",
    requires=_NEEDS["weight"],
)
def _(m: Any, rec: Recorder) -> None:
    rec.attempt("weight = torch.ones(2, 2)", lambda: setattr(m, "weight", torch.ones(2, 2)))


for _name, _what, _model in (
    ("weight", "a parameter", "flat"),
    ("steps", "a buffer", "flat"),
    ("linear", "a child", "child"),
):

    def _deleted(m: Any, rec: Recorder, name: str = _name) -> None:
        delattr(m, name)
        rec.note("left", [n for n, _ in [*m.named_parameters(), *m.named_buffers(), *m.named_children()]])

    scenario(
        "delattr",
        f"deletes {_what}",
        tier=Tier.VARIANT,
        model=_model,
        called=False,
        where=f"deleting {_what}",
        requires=_NEEDS[_name],
    )(_deleted)


@scenario(
    "delattr",
    "deletes a plain attribute set earlier",
    tier=Tier.VARIANT,
    called=False,
    where="deleting a plain attribute",
)
def _(m: Any, rec: Recorder) -> None:
    m.label = "a note"
    del m.label
    rec.note("has label", hasattr(m, "label"))
