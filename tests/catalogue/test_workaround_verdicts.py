"""A workaround judged as a fix is: gradients, dtypes and hook calls on calls 1-3, at three sizes.

The three workarounds this project shipped until 2026-12-05 are kept here as broken fixes: the
proof must call each what it is (loud or silently wrong), and the ones that replaced them must hold,
on the proof's space and on the model the report that found them used (a ``script_method`` forward
computing eager ops with a buffer after ``F.linear``, which no declared shape is).
"""

from __future__ import annotations

import contextlib
import json
import warnings
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint, set_checkpoint_early_stop

from helpers import copy_of_the_compiled_module, proof_of, run
from repro import workaround
from repro.catalogue import BUGS
from repro.engine.models import SIZES, build_scripted
from repro.proof import Proof, prove
from repro.vocabulary import Verdict, WorkaroundVerdict


def _proved(bug_id: str, apply: Callable[[], contextlib.AbstractContextManager[Any]], **changes: Any) -> Proof:
    bug = BUGS[bug_id]
    assert bug.workaround
    return prove(replace(bug, workaround=replace(bug.workaround, apply=apply, **changes)))


def _early_stop_alone() -> contextlib.AbstractContextManager[None]:
    return set_checkpoint_early_stop(False)


def _old_shallow_copy() -> contextlib.AbstractContextManager[None]:
    return workaround.replaced(torch.jit.ScriptModule, "__copy__", copy_of_the_compiled_module)


@pytest.mark.slow  # two proofs of the whole scope (the quick tier keeps the reported model's test below)
@pytest.mark.needs_bug("checkpoint-early-stop")
def test_early_stop_off_alone_is_loud_on_a_fresh_classs_first_call_and_its_replacement_holds():
    old = _proved("checkpoint-early-stop", _early_stop_alone)
    assert old.verdict == WorkaroundVerdict.LOUD and old.status == "does-not-work"
    assert {(r.call, r.verdict) for r in old.failures()} == {(1, Verdict.RAISES)}
    new = proof_of("checkpoint-early-stop")
    assert (new.verdict, new.status, new.limited()) == (WorkaroundVerdict.HOLDS, "works", [])


OLD_AUTOCAST_PROOF = """
import dataclasses, json, torch
from repro.catalogue import BUGS
from repro.proof import prove
from contextlib import contextmanager

@contextmanager
def jit_autocast_off():
    before = torch._C._jit_set_autocast_mode(False)
    try:
        yield
    finally:
        torch._C._jit_set_autocast_mode(before)

bug = BUGS["autocast-compiled-float32"]
old = dataclasses.replace(bug.workaround, apply=jit_autocast_off, style="")
proof = prove(dataclasses.replace(bug, workaround=old))
print(json.dumps([str(proof.verdict), sorted({r.scenario.name for r in proof.failures()}),
                  all("The following operation failed" in r.detail for r in proof.failures())]))
"""


@pytest.mark.slow  # a fresh interpreter that imports torch (the switch is set once, before the model runs)
@pytest.mark.needs_bug("autocast-compiled-float32")
def test_jit_autocast_off_breaks_training_and_a_plain_forward_holds():
    """In a fresh process, as the switch was to be set (once, before the model runs): a child's compiled
    forward optimized with JIT autocast on earlier in the process trains with it off later (measured)."""
    proc = run(["-c", OLD_AUTOCAST_PROOF])
    assert proc.returncode == 0, proc.stderr[-2000:]
    verdict, failing, all_raise = json.loads(proc.stdout.splitlines()[-1])
    assert verdict == WorkaroundVerdict.LOUD and all_raise
    assert failing == ["training under autocast to bfloat16 on CPU: gradients and their dtypes"]
    new = proof_of("autocast-compiled-float32")
    assert (new.verdict, new.status) == (WorkaroundVerdict.HOLDS, "works")


@pytest.mark.slow  # two proofs of the whole scope (the quick tier keeps the shallow-copy tests below)
def test_a_copy_of_the_compiled_module_is_silently_wrong_and_the_shared_one_holds():
    old = _proved("copy-shares-training", _old_shallow_copy)
    assert old.verdict == WorkaroundVerdict.SILENTLY_WRONG
    assert {r.scenario.name for r in old.failures()} == {
        "re-assigning a parameter on the copy or the original reaches both (shared _parameters)"
    }
    new = proof_of("copy-shares-training")
    assert (new.verdict, new.status) == (WorkaroundVerdict.HOLDS, "works")


# --- the model the report that found the checkpoint defect used: eager ops with a buffer after F.linear


def _reported(features: int, compiled: bool) -> nn.Module:
    """``tanh(F.linear(x * 0.5, w) * scale) + 1``, one parameter and one buffer; a fresh class each time."""
    weight = torch.arange(features * features, dtype=torch.float32).reshape(features, features) / 7 - 0.5

    def __init__(self: nn.Module) -> None:
        super(type(self), self).__init__()
        self.w = nn.Parameter(weight.clone())
        self.register_buffer("scale", torch.tensor(1.5))

    def forward(self: Any, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(F.linear(x * 0.5, self.w) * self.scale) + 1

    base = torch.jit.ScriptModule if compiled else nn.Module
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        body = {"__init__": __init__, "forward": torch.jit.script_method(forward) if compiled else forward}
        return type("Reported", (base,), body)()


def _checkpointed_calls(
    model: nn.Module, batch: int, features: int, switches: Callable[[], contextlib.AbstractContextManager[Any]]
) -> list[object]:
    """Calls 1-3 of ``checkpoint(model, x)`` under ``switches``: each call's gradients of weight and
    input, or the error's class."""
    seen: list[object] = []
    for _ in range(3):
        x = (torch.arange(batch * features, dtype=torch.float32).reshape(batch, features) / 3 - 1).requires_grad_()
        try:
            with switches():
                checkpoint(model, x, use_reentrant=False).sum().backward()
        except Exception as err:
            seen.append(type(err).__name__)
        else:
            weight = model.get_parameter("w")
            assert weight.grad is not None and x.grad is not None
            seen.append((weight.grad.clone(), x.grad.clone()))
        model.zero_grad()
    return seen


def _same(mine: list[object], eager: list[object]) -> list[bool | str]:
    return [
        m if isinstance(m, str) else all(torch.allclose(a, b, atol=1e-6) for a, b in zip(m, e))  # type: ignore[call-overload]
        for m, e in zip(mine, eager)
    ]


@pytest.mark.needs_bug("checkpoint-early-stop")
def test_early_stop_off_alone_returns_wrong_gradients_without_an_error_where_batch_equals_features():
    """What the report measured, kept as a broken fix: the first call is silently wrong at 2x2 and 3x3,
    a CheckpointError where the shapes differ; later calls are right."""
    for batch, features, first in ((2, 2, False), (3, 3, False), (3, 2, "CheckpointError")):
        eager = _checkpointed_calls(_reported(features, False), batch, features, contextlib.nullcontext)
        alone = _checkpointed_calls(_reported(features, True), batch, features, _early_stop_alone)
        assert _same(alone, eager) == [first, True, True], (batch, features)


def test_early_stop_and_optimization_off_hold_on_the_reported_model_at_every_size():
    switches = BUGS["checkpoint-early-stop"].workaround.apply  # type: ignore[union-attr]
    assert switches is not None
    for batch, features in ((2, 2), (3, 3), (3, 2), (1, 1), (1, 3)):
        eager = _checkpointed_calls(_reported(features, False), batch, features, contextlib.nullcontext)
        held = _checkpointed_calls(_reported(features, True), batch, features, switches)
        assert _same(held, eager) == [True, True, True], (batch, features)


# --- the shallow copy shares what nn.Module's copy.copy shares, and nothing else


@pytest.mark.parametrize("style", ["script_method", "plain_forward"])
def test_shallow_copy_shares_re_assigned_parameters_both_ways_and_keeps_its_own_training(style):
    model = build_scripted("flat", style, "later", "cpu")
    clone = workaround.shallow_copy(model)
    clone.weight = nn.Parameter(torch.zeros(2, 2))
    assert model.weight is clone.weight
    model.bias = nn.Parameter(torch.ones(2))
    assert clone.bias is model.bias
    clone.eval()
    assert (model.training, clone.training) == (True, False)
    assert type(clone).__name__ == type(model).__name__ and isinstance(clone, type(model))
    assert type(workaround.shallow_copy(clone)) is type(clone) and not workaround.shallow_copy(clone).training


class _ModeOut(torch.jit.ScriptModule):
    """A compiled forward that returns its own training mode: what dropout and batch norm read."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(1, 1)

    @torch.jit.script_method
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 0.0 + (1.0 if self.training else 0.0)


def test_a_copys_compiled_forward_runs_in_the_copys_mode_and_the_originals_in_its_own():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = _ModeOut()
    clone = workaround.shallow_copy(model)
    clone.eval()
    x = torch.zeros(1)
    assert (clone(x).item(), model(x).item(), model.training) == (0.0, 1.0, True)
    model.eval()
    clone.train()
    assert (clone(x).item(), model(x).item()) == (1.0, 0.0)


# --- process-wide switches never leak from one proof into another


def _jit_autocast_mode() -> bool:
    before = torch._C._jit_set_autocast_mode(True)
    torch._C._jit_set_autocast_mode(before)
    return before


def _process_state() -> tuple[object, ...]:
    from torch.nn.modules import module
    from torch.utils import checkpoint as checkpoint_module

    return (
        torch._C._get_graph_executor_optimize(),
        _jit_autocast_mode(),
        getattr(checkpoint_module, "_enable_checkpoint_early_stop", None),
        sorted(k for k in vars(torch.jit.RecursiveScriptModule) if k in workaround.CALL_IMPL_NEEDS),
        sorted(k for k in ("__copy__", "__deepcopy__") if k in vars(torch.jit.ScriptModule)),
        len(module._global_backward_hooks),
        len(module._global_forward_hooks),
    )


def _judged(proof: Proof) -> list[tuple[str, str, str, str, int, str]]:
    return [(r.scenario.key, r.style, r.instance, str(r.size), r.call, r.verdict) for r in proof.results]


@pytest.mark.slow  # five proofs: 8 s
def test_two_proofs_give_the_same_calls_in_either_order_and_leave_the_process_as_they_found_it():
    before = _process_state()
    first: dict[str, Any] = {}
    for order in (("checkpoint-early-stop", "global-backward-hooks-scripted"), ("global-backward-hooks-scripted",)):
        for bug_id in order:
            judged = _judged(prove(BUGS[bug_id]))
            assert first.setdefault(bug_id, judged) == judged, bug_id
            assert _process_state() == before, bug_id
    again = _judged(prove(BUGS["checkpoint-early-stop"]))
    assert again == first["checkpoint-early-stop"]


def test_a_proof_runs_every_call_at_every_size_on_both_instances():
    proof = proof_of("jit-error-replaces-exception")
    runs = {(r.scenario.key, r.style, r.instance, r.size, r.call) for r in proof.results}
    assert {size for *_, size, _ in runs} == set(SIZES)
    assert {call for *_, call in runs} == {1, 2, 3}
    assert {instance for _, _, instance, _, _ in runs} == {"first", "later"}
    assert "calls 1-3" in proof.space() and "2x2, 3x2, 1x1" in proof.space() and torch.__version__ in proof.space()


SAVED = "jit-save-drops-subclass-hooks"  # its workaround registers the hooks in __init__: another scenario


@pytest.mark.needs_bug(SAVED)
def test_a_workaround_written_another_way_is_proven_by_that_scenario_in_place_of_the_cases():
    from repro.catalogue import proof_runs

    bug = BUGS[SAVED]
    assert bug.workaround and bug.workaround.instead and bug.cases
    runs = proof_runs(bug)
    names = {scenario.name for scenario, _ in runs}
    assert not names & set(bug.cases)
    written = [(scenario, style) for scenario, style in runs if scenario.name in bug.workaround.instead]
    assert written and {style for _, style in written} == set(bug.styles)
    with pytest.raises(ValueError, match="is not in the table"):
        proof_runs(replace(bug, workaround=replace(bug.workaround, instead="torch.jit.save: no such scenario")))


@pytest.mark.slow  # 11 shapes, each saved and loaded on every call: 10 s
@pytest.mark.needs_bug(SAVED)
def test_a_workaround_whose_other_way_still_departs_is_silently_wrong():
    """The hooks registered after construction, as the bug's own case does, in place of ``__init__``."""
    from repro.engine.scenarios import SCENARIOS

    bug = BUGS[SAVED]
    assert bug.workaround and bug.workaround.apply
    case = next(scenario.key for scenario in SCENARIOS if scenario.name in bug.cases)
    proof = _proved(SAVED, bug.workaround.apply, instead=case)
    assert proof.verdict is WorkaroundVerdict.SILENTLY_WRONG
