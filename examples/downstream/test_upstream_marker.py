"""A pytest function tied to a catalogued bug with the plugin's marker (no import of this package).

While the ledger says ``full-backward-hook-flag`` is present on the installed torch, this test is an
expected failure (``xfailed``); once the ledger says fixed, it must pass. ``.ci/check-package`` runs it
against the built wheel, with the ledger the wheel ships and with one passed by ``--upstream-ledger``.

    pytest examples/downstream/test_upstream_marker.py [--upstream-ledger PATH]
"""

import pytest
import torch
from torch import nn


class Net(torch.jit.ScriptModule):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(2, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x)


@pytest.mark.upstream_bug("full-backward-hook-flag")
def test_full_backward_hook_runs_once():
    calls = []
    model = Net()
    model.register_full_backward_hook(lambda module, grad_input, grad_output: calls.append(grad_output))
    model(torch.ones(1, 2, requires_grad=True)).sum().backward()
    assert len(calls) == 1, f"the full backward hook ran {len(calls)} times, expected once"
