"""The layers contract (pyproject.toml, checked by lint-imports in .ci/run) places every module."""

from __future__ import annotations

import pkgutil
import sys
from pathlib import Path

import pytest

import repro

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - CI runs 3.11
    tomllib = pytest.importorskip("tomli")

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def _layered() -> set[str]:
    contracts = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]
    layers = next(c["layers"] for c in contracts if c["type"] == "layers")
    return {name.strip() for layer in layers for name in layer.split("|")}


@pytest.mark.parametrize("module", sorted(f"repro.{m.name}" for m in pkgutil.iter_modules(repro.__path__)))
def test_every_module_of_the_package_sits_in_a_layer(module):
    """A module in no layer is checked by nobody: a new one must be placed."""
    assert module in _layered()


def test_the_tracker_sits_above_the_package():
    assert "tracker" in _layered()
