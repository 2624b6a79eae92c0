"""Calls 1, 2 and 3 at three sizes: how a workaround is judged, beyond the one run a report makes.

A report runs each scenario once on each model. A workaround can match eager there and be wrong on
the next call of the same model (TorchScript profiles a forward's first run and optimizes the
later ones), or at another batch or width (a wrong gradient passes checkpoint's shape checks only
where shapes happen to agree). So here a scenario's body runs three times on one model, at each
size of ``SIZES`` (batch and features equal, different, both 1), and each call is judged on its
own against the eager twin's same call: what the body notes (outputs with their dtypes, hook calls
with their arguments, state), the gradient of every parameter, buffer and input after the call
(None or a tensor, its values and dtype), and the exception, if one was raised.
"""

from __future__ import annotations

from dataclasses import replace

from repro.engine.models import Size, build_eager, build_scripted
from repro.engine.oracle import Explains, ScenarioResult, Side, judged, not_runnable, observe_calls
from repro.engine.scenarios import Scenario

CALLS = 3


def eager_calls(scenario: Scenario, device: str, size: Size) -> list[Side]:
    """The eager twin's calls, made once for all of a scenario's runs at ``size``."""
    return observe_calls(lambda: build_eager(scenario.model, device, size), scenario, device, size, CALLS)


def run_calls(
    scenario: Scenario, style: str, device: str, instance: str, size: Size, eager: list[Side], *, explains: Explains
) -> list[ScenarioResult]:
    """Each call of ``scenario`` on one ScriptModule (``instance`` of a fresh class, at ``size``), judged
    against the same call of the eager twin (``eager_calls``); a run that cannot be made here is one
    result, as ``run_scenario`` gives it."""
    unrunnable = not_runnable(scenario, style, instance)
    if unrunnable:
        return [replace(unrunnable, size=size)]
    build = lambda: build_scripted(scenario.model, style, instance, device, size)  # noqa: E731
    scripted = observe_calls(build, scenario, device, size, CALLS)
    return [
        judged(scenario, style, instance, mine, theirs, explains=explains, size=size, call=call)
        for call, (mine, theirs) in enumerate(zip(scripted, eager), start=1)
    ]
