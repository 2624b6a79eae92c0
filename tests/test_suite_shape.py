"""The suite's own shape: test modules share code through helper modules and conftest.py, never through
one another (importing a test module runs its module-level code and can register its fixtures twice)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent


def imported_test_modules(path: Path) -> list[str]:
    """The ``test_*`` modules that ``path`` imports, at any depth (inside functions too)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found += [name for name in names if name.split(".")[0].startswith("test_")]
    return found


@pytest.mark.parametrize("path", sorted(TESTS.rglob("test_*.py")), ids=lambda path: path.name)
def test_no_test_module_imports_another_test_module(path):
    assert imported_test_modules(path) == [], f"{path.name} imports from a test module; move the shared code out"
