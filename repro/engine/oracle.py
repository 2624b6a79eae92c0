"""The differential oracle: run a scenario on a ScriptModule subclass and on its eager twin.

A verdict is ``match`` only when both twins recorded the same observation (hook calls
with their arguments, gradients, state dicts); not raising is never enough.

Verdicts: ``match``; ``raises`` (the ScriptModule raised, eager did not); ``differs``
(both ran, observations differ); ``refused`` (raised, by TorchScript's design: see
``repro.engine.by_design``); ``unavailable`` (this torch lacks an API or keyword the scenario
needs, so neither twin can run it); ``not-run`` (it needs an accelerator this machine lacks: the
API exists); ``error`` (the eager twin itself raised: the scenario is not valid on this torch).
"""

from __future__ import annotations

import gc
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from repro import ctrl_c
from repro.engine import forked
from repro.engine.models import (
    INSTANCES,
    MODELS,
    SIZE,
    STYLES,
    Size,
    build_eager,
    build_scripted,
    is_really_scripted,
    styles_of,
)
from repro.engine.recorder import Recorder
from repro.engine.scenarios import Scenario
from repro.engine.scenarios.table import missing_needs
from repro.vocabulary import Verdict


@dataclass(frozen=True)
class Side:
    """What one twin did: its observation, and the error that stopped it, if any."""

    observation: dict[str, Any]
    error: str | None


@dataclass(frozen=True)
class ScenarioResult:
    scenario: Scenario
    style: str
    verdict: Verdict
    detail: str
    scripted: Side | None = None
    eager: Side | None = None
    instance: str = "later"
    size: Size = SIZE  # the input's batch and the model's features
    call: int = 0  # which call of the body on one model (repro.engine.calls); 0: the one run a report makes
    # The catalogued bug that explains it, and the bug whose loud upstream patch raised its refusal,
    # read once when it was judged (``explains``): the report and every format read them from here.
    # ``cause_read`` False: not read yet (a result built elsewhere).
    cause: str | None = None
    refused_by: str | None = None
    cause_read: bool = False


@dataclass(frozen=True)
class OracleRun:
    results: list[ScenarioResult]
    warnings: list[str]  # distinct TorchScript deprecation warnings, reported once
    cannot_test: str | None  # why TorchScript could not be exercised at all


class DiffersFromEager(AssertionError):
    """Both twins ran but the ScriptModule behaved differently."""


class ScriptRaised(AssertionError):
    """The ScriptModule raised where eager did not."""


class EagerFailed(AssertionError):
    """The eager twin raised: the scenario itself is broken on this torch."""


def absent_device(scenario: Scenario) -> str | None:
    """Why a scenario that needs an accelerator cannot run here ("no CUDA"), or None."""
    if not scenario.device:
        return None
    import torch

    backend = getattr(torch, scenario.device, None)
    available, count = getattr(backend, "is_available", None), getattr(backend, "device_count", None)
    name = scenario.device.upper()
    if not (callable(available) and available()):
        return f"no {name}"
    if scenario.devices > 1 and not (callable(count) and count() >= scenario.devices):
        return f"fewer than {scenario.devices} {name} devices"
    return None


def observe(build: Callable[[], Any], scenario: Scenario, device: str) -> Side:
    """Build a fresh model, run the scenario body on it and record everything. A model that fails
    to build is an observation too: that torch cannot make this twin."""
    return observe_calls(build, scenario, device, SIZE, 1, gradients=False)[0]


def observe_calls(
    build: Callable[[], Any], scenario: Scenario, device: str, size: Size, calls: int, *, gradients: bool = True
) -> list[Side]:
    """Build a fresh model and run the scenario body on it ``calls`` times, each call recorded apart
    and, with ``gradients``, noting every gradient it left (``Recorder.gradients``). A call that raises
    is an observation, and the next call runs on the same model. A Ctrl-C is never one, even where
    TorchScript turned it into an error (``ctrl_c.kept``)."""
    with ctrl_c.kept():
        try:
            model = build()
        except Exception as err:
            return [Side({}, f"building the model raised {describe_error(err)}")] * calls
        sides = []
        for _ in range(calls):
            rec = Recorder(model, device, MODELS[scenario.model].extra, size)
            error = None
            try:
                scenario.body(model, rec)
            except Exception as err:  # the error is the observation
                error = describe_error(err)
            if gradients:  # this call's own: a call that raised leaves nothing for the next one to differ by
                rec.gradients()
                for param in model.parameters():
                    param.grad = None
            sides.append(Side(rec.observation(), error))
        return sides


def judge(scripted: Side, eager: Side) -> tuple[Verdict, str]:
    """Compare the twins: (verdict, one-line detail)."""
    if eager.error:
        return Verdict.ERROR, f"the eager twin raised {eager.error}"
    if scripted.error:
        return Verdict.RAISES, scripted.error
    if scripted.observation == eager.observation:
        return Verdict.MATCH, "same hook calls, arguments, gradients and state"
    return Verdict.DIFFERS, _difference(scripted.observation, eager.observation)


def observe_eager(scenario: Scenario, device: str) -> Side:
    return observe(lambda: build_eager(scenario.model, device), scenario, device)


def eager_twin(scenario: Scenario, device: str) -> Side | None:
    """The eager twin's observation, made once for all of a scenario's runs; None where the scenario
    cannot run here (``run_scenario`` says why)."""
    return None if missing_needs(scenario) or absent_device(scenario) else observe_eager(scenario, device)


# What the catalogue reads in a departure (``repro.catalogue.explain``): the bug that explains it, if
# one does (such a departure is that bug's, never TorchScript's design), and the bug whose loud
# upstream patch raised it, if one did. The catalogue sits above the engine, so its callers hand it in.
Explains = Callable[[ScenarioResult], "tuple[str | None, str | None]"]


def run_scenario(
    scenario: Scenario,
    style: str,
    device: str,
    instance: str = "later",
    eager: Side | None = None,
    *,
    explains: Explains,
) -> ScenarioResult:
    """One scenario on a ScriptModule subclass (the ``first`` instance of a fresh class, or a
    ``later`` one) and on the eager twin (``eager``: its observation, when already made)."""
    unrunnable = not_runnable(scenario, style, instance)
    if unrunnable:
        return unrunnable
    scripted = observe(lambda: build_scripted(scenario.model, style, instance, device), scenario, device)
    return judged(scenario, style, instance, scripted, eager or observe_eager(scenario, device), explains=explains)


def not_runnable(scenario: Scenario, style: str, instance: str) -> ScenarioResult | None:
    """The result of a run this torch or machine cannot make (``unavailable``, ``not-run``), or None."""
    missing = missing_needs(scenario)
    if missing:
        return ScenarioResult(
            scenario, style, Verdict.UNAVAILABLE, f"this torch lacks {', '.join(missing)}", instance=instance
        )
    absent = absent_device(scenario)
    if absent:
        return ScenarioResult(scenario, style, Verdict.NOT_RUN, f"not run: {absent}", instance=instance)
    return None


def judged(
    scenario: Scenario,
    style: str,
    instance: str,
    scripted: Side,
    eager: Side,
    *,
    explains: Explains,
    size: Size = SIZE,
    call: int = 0,
) -> ScenarioResult:
    """The two sides' verdict and detail: a departure a catalogued bug explains is that bug's; one
    TorchScript's design explains is ``refused``."""
    from repro.engine.by_design import designed_difference, refusal

    verdict, detail = judge(scripted, eager)
    result = ScenarioResult(scenario, style, verdict, detail, scripted, eager, instance, size, call)
    if verdict not in (Verdict.RAISES, Verdict.DIFFERS):
        return replace(result, cause_read=True)
    cause, refused_by = explains(result)
    result = replace(result, cause=cause, refused_by=refused_by, cause_read=True)
    if cause:  # a catalogued bug's departure is its own
        return result
    where = refusal(scenario.apis, scripted.error) if verdict == Verdict.RAISES else None
    if verdict == Verdict.DIFFERS:
        where = designed_difference(scripted.observation, eager.observation)
    designed = replace(result, verdict=Verdict.REFUSED, detail=f"{detail} ({where})", refused_by=None)
    return designed if where else result


def run_all(device: str, scenarios: list[Scenario], processes: int = 1, *, explains: Explains) -> OracleRun:
    """Every scenario in each style it runs in, on a first and on a later instance, with TorchScript
    warnings gathered once. The eager twin's observation is made once per scenario. ``processes`` > 1
    shares the scenarios with forked copies of this process (``repro.engine.forked``)."""
    gc.freeze()  # the objects that exist now (~170k from importing torch) are not rescanned: ~0.1 s less
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            reason = torchscript_problem(device)
        done = (
            []
            if reason
            else forked.shared(partial(_runs, device=device, explains=explains), scenarios, processes, _one_thread)
        )
    finally:
        gc.unfreeze()
    results = [ScenarioResult(s, *run) for s, (runs, _) in zip(scenarios, done) for run in runs]
    said = [*_torchscript_warnings(caught), *(text for _, texts in done for text in texts)]
    return OracleRun(results, list(dict.fromkeys(said)), reason)


_Runs = tuple[list[tuple[Any, ...]], list[str]]  # one scenario's runs, each without its scenario, and warnings


def _runs(share: Sequence[Scenario], device: str, explains: Explains) -> list[_Runs]:
    return [_runs_of(s, device, explains) for s in share]


def _one_thread() -> None:
    """In a forked copy: torch's intra-op threads (OpenMP) did not survive the fork, and an op that
    would use them waits forever (seen with autocast's bfloat16 matmul); one thread needs none."""
    import torch

    torch.set_num_threads(1)


def _runs_of(s: Scenario, device: str, explains: Explains) -> _Runs:
    """One scenario in each of its styles and instances, as plain data a forked copy can send back."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        eager = eager_twin(s, device)
        runs = [
            run_scenario(s, style, device, instance, eager, explains=explains)
            for style in styles_of(s.model)
            for instance in INSTANCES
        ]
    plain = [(r.style, r.verdict, r.detail, r.scripted, r.eager, r.instance) for r in runs]
    return plain, _torchscript_warnings(caught)


def torchscript_problem(device: str) -> str | None:
    """Why a ScriptModule subclass cannot be built and scripted here, or None if it can."""
    try:
        for style in STYLES:
            if not is_really_scripted(build_scripted("flat", style, "later", device)):
                return "TorchScript is disabled (PYTORCH_JIT=0?): ScriptModule is a plain nn.Module"
    except Exception as err:
        return f"TorchScript is unusable here: {describe_error(err)}"
    return None


def assert_like_eager(result: ScenarioResult) -> None:
    """Raise the exception that names how the ScriptModule departed from eager, if it did."""
    if result.verdict == Verdict.RAISES:
        raise ScriptRaised(result.detail)
    if result.verdict == Verdict.DIFFERS:
        raise DiffersFromEager(result.detail)
    if result.verdict == Verdict.ERROR:
        raise EagerFailed(result.detail)


def _torchscript_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    seen: dict[str, None] = {}
    for w in caught:
        text = str(w.message)
        if issubclass(w.category, (DeprecationWarning, FutureWarning)) and "jit" in text + w.filename:
            seen.setdefault(f"{w.category.__name__}: {text}")
    return list(seen)


# What an error's text says about this process rather than the behaviour: TorchScript's counter of
# classes compiled so far (every run compiles its own) and memory addresses (0xADDRESS). Both become
# fixed text, so that a run reads the same whichever runs came before it.
_PROCESS_DETAILS = (
    (re.compile(r"___torch_mangle_\d+"), "___torch_mangle_N"),
    (re.compile(r"0x[0-9a-f]{6,}"), "0xADDRESS"),
)


def describe_error(err: BaseException) -> str:
    lines = str(err).strip().splitlines()
    text = f"{type(err).__name__}: {lines[0]}" if lines else type(err).__name__
    for pattern, fixed in _PROCESS_DETAILS:
        text = pattern.sub(fixed, text)
    return text


def _difference(scripted: dict[str, Any], eager: dict[str, Any]) -> str:
    """Name the first observation that differs, in terms a reader can act on: inside a record (a
    tensor's class, dtype, shape, requires_grad) or a list of the same length, the first entry that
    differs, so that what differs is what the line shows."""
    for key in sorted(set(scripted) | set(eager)):
        left, right = scripted.get(key), eager.get(key)
        if left == right:
            continue
        if key == "hook calls":
            left_labels, right_labels = [c[0] for c in left or []], [c[0] for c in right or []]
            if left_labels != right_labels:
                return f"hook calls: ScriptModule {left_labels} vs eager {right_labels}"
            return "hook calls: same hooks in the same order, different arguments"
        where, left, right = _first_differing(key, left, right)
        return f"{where}: ScriptModule {_shown(left)} vs eager {_shown(right)}"
    return "observations differ"


_ABSENT = object()  # a key one side's record lacks


def _first_differing(where: str, left: Any, right: Any) -> tuple[str, Any, Any]:
    if isinstance(left, dict) and isinstance(right, dict):
        for key in sorted(set(left) | set(right), key=str):
            if left.get(key, _ABSENT) != right.get(key, _ABSENT):
                return _first_differing(f"{where}[{key!r}]", left.get(key, _ABSENT), right.get(key, _ABSENT))
    if isinstance(left, list) and isinstance(right, list) and len(left) == len(right):
        for index, (a, b) in enumerate(zip(left, right)):
            if a != b:
                return _first_differing(f"{where}[{index}]", a, b)
    return where, left, right


def _shown(value: Any, limit: int = 200) -> str:
    """``repr``, whole up to ``limit`` characters (a value that long is a tensor's values: --json has
    every observation whole)."""
    text = "absent" if value is _ABSENT else repr(value)
    return text if len(text) <= limit else f"{text[: limit - 40]}... ({len(text)} characters; --json)"
