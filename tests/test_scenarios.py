"""Every scenario, both ScriptModule styles, every device: the ScriptModule must match eager.

Scenarios the bug affects are strict expected failures while the ledger says the bug is
present for the installed torch, limited to the ways the bug shows itself (its
RuntimeError, or hooks that register but misbehave). A torch that fixes the bug makes
them XPASS, which strict mode turns red until the ledger is updated; a ledger that
claims a fix the installed torch lacks turns them red too (tests/test_flip.py proves both).
"""

from __future__ import annotations

import pytest
import torch

from repro.ledger import expectation_for, ledger_path, load
from repro.engine.models import STYLES
from repro.engine.oracle import DiffersFromEager, KnownBug, assert_like_eager, run_scenario
from repro.engine.scenarios import SCENARIOS

EXPECTED = expectation_for(load(ledger_path()), torch.__version__)
DEVICES = [
    pytest.param("cpu"),
    pytest.param("cuda", marks=pytest.mark.cuda),
    pytest.param("npu", marks=pytest.mark.npu),
]


def _marks(scenario):
    if EXPECTED.outcome == "cannot-test":
        return [pytest.mark.skip(reason=f"ledger: TorchScript cannot be tested on torch {torch.__version__}")]
    if scenario.bug and EXPECTED.outcome == "present":
        return [pytest.mark.xfail(
            strict=True, raises=(KnownBug, DiffersFromEager),
            reason=f"ScriptModule backward-hook bug, expected present ({EXPECTED.reason})",
        )]
    return []


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("style", list(STYLES))
@pytest.mark.parametrize(
    "scenario", [pytest.param(s, id=s.key, marks=_marks(s)) for s in SCENARIOS]
)
def test_scriptmodule_hooks_behave_like_eager(scenario, style, device):
    result = run_scenario(scenario, style, device)
    if result.verdict == "unavailable":
        pytest.skip(result.detail)
    assert_like_eager(result)
