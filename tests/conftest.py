"""Shared set-up: import torch the way the CLI does, and skip device tests without a device."""

from __future__ import annotations

import pytest

from repro.environment import import_torch, npu_status

torch = import_torch()


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("cuda") and not torch.cuda.is_available():
        pytest.skip("no CUDA device on this machine")
    if item.get_closest_marker("npu"):
        usable, status = npu_status()
        if not usable:
            pytest.skip(f"no usable NPU: torch_npu is {status}")
