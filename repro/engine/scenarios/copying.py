"""Copying and pickling a model: what users do to snapshot or ship one (EMA weights, checkpoints)."""

from __future__ import annotations

import copy
import pickle

from repro.engine.scenarios.table import scenario

for _copier in ("copy.deepcopy", "copy.copy"):
    def _copied(m, rec, copier=getattr(copy, _copier.split(".")[1])):
        m.register_forward_hook(rec.mark("forward hook, registered before the copy"))
        duplicate = copier(m)
        rec.facts["the copy's class"] = type(duplicate).__name__
        rec.note("the copy's output", duplicate(rec.input(), *rec.extra(rec.device)))

    scenario(_copier, "keeps the class and the hooks; the copy runs", tier="default")(_copied)


@scenario("pickle.dumps", "round-trips through pickle; the copy runs", "pickle.loads", tier="variant")
def _(m, rec):
    duplicate = pickle.loads(pickle.dumps(m))
    rec.note("the copy's output", duplicate(rec.input()))
