"""The functions users apply to modules: ``torch.nn.utils`` (pruning, weight and spectral norm,
parametrizations, gradient clipping), ``torch.func.functional_call``, activation checkpointing, and an
optimizer step over ``parameters()``."""

from __future__ import annotations

from typing import Any

import torch

from repro.engine.recorder import Recorder
from repro.engine.scenarios.table import scenario
from repro.vocabulary import Tier


@scenario(
    "torch.nn.utils.prune.l1_unstructured",
    "prunes half of a child's weight",
    tier=Tier.VARIANT,
    model="child",
    requires=("linear",),
)
def _(m: Any, rec: Recorder) -> None:
    from torch.nn.utils import prune

    prune.l1_unstructured(m.linear, "weight", 0.5)
    rec.note("output", rec.forward(rec.input()))


for _norm in ("torch.nn.utils.parametrizations.weight_norm", "torch.nn.utils.parametrizations.spectral_norm"):

    def _normed(m: Any, rec: Recorder, norm: str = _norm) -> None:
        from repro.engine.scenarios.table import find_api

        find_api(norm)(m.linear)
        rec.facts["parameters"] = sorted(name for name, _ in m.named_parameters())

    scenario(_norm, "reparametrises a child's weight", tier=Tier.VARIANT, model="child", requires=("linear",))(_normed)


@scenario(
    "torch.nn.utils.parametrize.register_parametrization",
    "a parametrization on a child's weight",
    tier=Tier.VARIANT,
    model="child",
    requires=("linear",),
)
def _(m: Any, rec: Recorder) -> None:
    from torch.nn.utils import parametrize

    class Doubled(torch.nn.Module):
        def forward(self, weight: torch.Tensor) -> torch.Tensor:
            return weight * 2

    parametrize.register_parametrization(m.linear, "weight", Doubled())
    rec.note("output", rec.forward(rec.input()))


@scenario(
    "torch.nn.utils.clip_grad_norm_", "clips the gradients of parameters()", tier=Tier.VARIANT, requires=("x only",)
)
def _(m: Any, rec: Recorder) -> None:
    rec.model(rec.input()).sum().backward()
    rec.note("total norm", torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0))
    rec.facts["grads"] = {name: rec.summary(p.grad) for name, p in m.named_parameters()}


@scenario(
    "torch.func.functional_call", "calls the model with other parameters", tier=Tier.VARIANT, requires=("x only",)
)
def _(m: Any, rec: Recorder) -> None:
    params = {name: torch.zeros_like(p) for name, p in m.named_parameters()}
    rec.note("output", torch.func.functional_call(m, params, (rec.input(),)))


def _checkpointed(m: Any, rec: Recorder) -> None:
    from torch.utils.checkpoint import checkpoint

    x = rec.input()
    checkpoint(m, x, use_reentrant=False).sum().backward()
    rec.note("input grad", x.grad)
    rec.facts["grads"] = {name: rec.summary(p.grad) for name, p in m.named_parameters()}


@scenario(
    "torch.utils.checkpoint.checkpoint",
    "non-reentrant, without early stop: same gradients",
    tier=Tier.VARIANT,
    requires=("x only",),
)
def _(m: Any, rec: Recorder) -> None:
    from contextlib import nullcontext

    from torch.utils import checkpoint

    early_stop = getattr(checkpoint, "set_checkpoint_early_stop", None)  # a torch without it never stops early
    with early_stop(False) if early_stop else nullcontext():
        _checkpointed(m, rec)


# Early stop (the default since it exists) ends the recomputation by raising inside the forward. The first
# non-reentrant checkpoint of a process loads dynamo (1.2 s here): slow tier.
scenario(
    "torch.utils.checkpoint.checkpoint",
    "non-reentrant, with early stop: same gradients",
    "torch.utils.checkpoint.set_checkpoint_early_stop",
    tier=Tier.SLOW,
    where="with early stop",
    requires=("x only",),
)(_checkpointed)


@scenario(
    "torch.optim.SGD",
    "one step over parameters() changes them as on eager",
    tier=Tier.VARIANT,
    requires=("x only", "params"),
)
def _(m: Any, rec: Recorder) -> None:
    optimizer = torch.optim.SGD(m.parameters(), lr=0.5)
    rec.model(rec.input()).sum().backward()
    optimizer.step()
    rec.parameters()
