"""Every scenario, in each style it runs in (both ScriptModule subclass styles, or torch.jit.script),
first and later instances, every device: the ScriptModule must match eager (or refuse by design,
which skips with the torch line that refuses).

A scenario run in the scope of a catalogued bug that the ledger expects present for the
installed torch is an expected failure, but only for that bug: the run must depart from eager
in the way the bug's recogniser knows. A run that matches eager while the ledger expects the
bug is a failure (the ledger must follow: strict), and so is any other departure.
tests/filing/test_flip.py proves both directions on a patched torch.
"""

from __future__ import annotations

import pytest
import torch

from repro.catalogue import BUGS, cause_of, explain
from repro.engine.models import styles_of
from repro.engine.oracle import INSTANCES, assert_like_eager, run_scenario
from repro.engine.scenarios import SCENARIOS
from repro.environment import npu_status
from repro.ledger import expectation_for, ledger_path, load

LEDGER = load(ledger_path())
EXPECTED = {bug_id: expectation_for(LEDGER, torch.__version__, bug_id) for bug_id in BUGS}
RUNS = [pytest.param(s, style, id=f"{s.key}-{style}") for s in SCENARIOS for style in styles_of(s.model)]
USABLE = {"cuda": (torch.cuda.is_available(), "no CUDA device on this machine"), "npu": npu_status()}
# An accelerator's runs are generated only where it is usable (a missing one cost 726 skipped runs each,
# 1.5 s of the quick suite); test_every_run_on_an_accelerator_needs_one says which are not generated.
DEVICES = [
    pytest.param("cpu"),
    *(pytest.param(d, marks=getattr(pytest.mark, d)) for d, (usable, _) in USABLE.items() if usable),
]


@pytest.mark.parametrize("device", [d for d, (usable, _) in USABLE.items() if not usable])
def test_every_run_on_an_accelerator_needs_one(device):
    """One line in the skip summary where every scenario's runs on ``device`` are not generated."""
    status = USABLE[device][1]
    pytest.skip(f"{status if device == 'cuda' else f'no usable NPU: torch_npu {status}'}: its runs are not generated")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("instance", INSTANCES)
@pytest.mark.parametrize(("scenario", "style"), RUNS)
def test_scriptmodule_hooks_behave_like_eager(scenario, style, instance, device):
    if any(e.outcome == "cannot-test" for e in EXPECTED.values()):
        pytest.skip(f"ledger: TorchScript cannot be tested on torch {torch.__version__}")
    result = run_scenario(scenario, style, device, instance, explains=explain)
    if result.verdict in ("unavailable", "refused"):
        pytest.skip(f"{result.verdict}: {result.detail}")
    expected = [bug_id for bug_id, bug in BUGS.items() if bug.covers(result) and EXPECTED[bug_id].outcome == "present"]
    if result.verdict == "match" and expected:
        pytest.fail(
            f"matches eager, but the ledger expects {', '.join(expected)} here "
            f"({'; '.join(EXPECTED[b].reason for b in expected)}): update the ledger"
        )
    cause = cause_of(result)
    if cause is not None and cause in expected:
        pytest.xfail(f"{cause}: expected present ({EXPECTED[cause].reason})")
    assert_like_eager(result)


@pytest.mark.slow  # a gloo process group and DDP: about a second
def test_the_ddp_scenario_leaves_the_excepthook_as_it_found_it():
    """init_process_group wraps sys.excepthook for good: left alone, every traceback printed after the
    DDP scenarios carried "[rank0]: " once per group made (issue 46)."""
    import sys

    from repro.engine.oracle import run_all

    before = sys.excepthook
    ddp = [s for s in SCENARIOS if s.api == "torch.nn.parallel.DistributedDataParallel"]
    assert ddp and run_all("cpu", ddp[:2], explains=explain).results
    assert sys.excepthook is before
