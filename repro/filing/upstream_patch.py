"""The proposed upstream fix, generated as a unified diff from the installed torch's own files.

Two hunks, with paths as in a PyTorch checkout:
  * ``torch/jit/_recursive.py``: add the flag to ``ignored_attributes``, so scripting does
    not turn it into a C++ attribute typed ``NoneType`` (and does not delete the wrapper's copy);
  * ``torch/jit/_script.py``: ``ScriptModule.__setattr__`` stores the flag on the Python
    wrapper, where ``Module._get_backward_hooks`` reads it, instead of forwarding it.
plus a new regression test file in upstream's style. Lines are located with ``ast``, so
the diff applies to whichever release is installed.
"""

from __future__ import annotations

import ast
import difflib
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from repro.sanitise import one_line
from repro.source_checks import (
    FLAG,
    RECURSIVE,
    SCRIPT,
    forwarding_call,
    ignored_attributes_node,
    installed_sources,
    mentions_flag,
)

TEST_PATH = "test/jit/test_script_module_backward_hooks.py"
TEST_JIT = "test/test_jit.py"
REGISTRATION = "from jit.test_script_module_backward_hooks import TestScriptModuleBackwardHooks  # noqa: F401"

SETATTR_BRANCH = [
    f'if attr == "{FLAG}":',
    "    # Module's backward-hook mode lives on the Python wrapper, where",
    "    # Module._get_backward_hooks reads it; the scripted module has no slot for it.",
    "    return super().__setattr__(attr, value)",
]

REGRESSION_TEST = """# Owner(s): ["oncall: jit"]
# Regression test for https://github.com/pytorch/pytorch/issues/181473

import torch
from torch.testing._internal.common_utils import run_tests, TestCase


class M(torch.jit.ScriptModule):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(2, 2)

    @torch.jit.script_method
    def forward(self, x):
        return self.linear(x)


class TestScriptModuleBackwardHooks(TestCase):
    def _backward_with(self, register):
        m = M()
        calls = []
        register(m, lambda mod, grad_input, grad_output: calls.append((mod, grad_input, grad_output)))
        x = torch.ones(1, 2, requires_grad=True)
        m(x).sum().backward()
        return m, calls

    def test_full_backward_hook_fires_with_gradients(self):
        m, calls = self._backward_with(lambda m, hook: m.register_full_backward_hook(hook))
        self.assertEqual(len(calls), 1)
        self.assertIs(calls[0][0], m)
        self.assertEqual(calls[0][1][0], torch.ones(1, 2) @ m.linear.weight)
        self.assertEqual(calls[0][2][0], torch.ones(1, 2))

    def test_legacy_backward_hook_fires(self):
        _, calls = self._backward_with(lambda m, hook: m.register_backward_hook(hook))
        self.assertEqual(len(calls), 1)

    def test_full_backward_hook_removed(self):
        m = M()
        calls = []
        handle = m.register_full_backward_hook(lambda *args: calls.append(args))
        handle.remove()
        m(torch.ones(1, 2, requires_grad=True)).sum().backward()
        self.assertEqual(calls, [])


if __name__ == "__main__":
    run_tests()
"""


class PatchError(Exception):
    """The installed sources do not have the shape the patch expects (one sentence)."""


def patched_sources(sources: Mapping[str, str | None]) -> dict[str, str]:
    """``sources`` with the fix applied (only the two torch files); one sentence when one is missing."""
    return {RECURSIVE: _patch_recursive(_source(sources, RECURSIVE)), SCRIPT: _patch_script(_source(sources, SCRIPT))}


def _source(sources: Mapping[str, str | None], path: str) -> str:
    text = sources.get(path)
    if text is None:
        raise PatchError(f"the installed torch lacks {path}.")
    return text


def lines_of(text: str) -> list[str]:
    """``text``'s lines, ends kept, split on ``\\n`` only: as ``ast`` counts lines and ``git`` diffs them
    (``str.splitlines`` also splits on form feeds, ``\\x1c``-``\\x1e``, ``\\x85``, ``\\u2028``...)."""
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _parse(path: str, text: str) -> ast.Module:
    try:
        return ast.parse(text)
    except SyntaxError as err:
        raise PatchError(f"{path} does not parse as Python (line {err.lineno}: {err.msg}).") from None
    except ValueError as err:  # a null byte
        raise PatchError(f"{path} does not parse as Python ({err}).") from None


def _insert(text: str, before_line: int, new_lines: list[str], indent: str) -> str:
    lines = lines_of(text)
    lines[before_line - 1 : before_line - 1] = [f"{indent}{line}".rstrip() + "\n" for line in new_lines]
    return "".join(lines)


def _indent_of(text: str, lineno: int) -> str:
    line = lines_of(text)[lineno - 1]
    return line[: len(line) - len(line.lstrip())]


def _patch_recursive(text: str) -> str:
    node = ignored_attributes_node(_parse(RECURSIVE, text))
    if node is None or not isinstance(node.value, ast.List) or not node.value.elts:
        raise PatchError(f"{RECURSIVE} has no module-level ignored_attributes list.")
    if mentions_flag(node):
        raise PatchError(f"{RECURSIVE} already lists {FLAG!r} in ignored_attributes.")
    last = node.value.elts[-1]
    last_line = last.end_lineno or last.lineno  # ast.parse always sets end_lineno
    if last_line == node.lineno:
        raise PatchError(f"{RECURSIVE}: ignored_attributes is on one line; edit it by hand.")
    lines = lines_of(text)
    end = lines[last_line - 1]
    if not end.rstrip().endswith(","):  # keep the list valid: no implicit concatenation
        lines[last_line - 1] = end.rstrip() + ",\n"
    return _insert("".join(lines), last_line + 1, [f'"{FLAG}",'], _indent_of(text, last.lineno))


def _patch_script(text: str) -> str:
    method, call = forwarding_call(_parse(SCRIPT, text))
    if method is None or call is None:
        raise PatchError(f"{SCRIPT}: ScriptModule.__setattr__ does not forward to _actual_script_module.")
    if mentions_flag(method):
        raise PatchError(f"{SCRIPT}: ScriptModule.__setattr__ already special-cases {FLAG!r}.")
    return _insert(text, call.lineno, SETATTR_BRANCH, _indent_of(text, call.lineno))


def unified_diff(before: Mapping[str, str | None], after: Mapping[str, str]) -> str:
    """A ``git apply``/``patch -p1`` diff; a file absent from ``before`` is created. Lines are split on
    ``\\n`` alone, so a form feed or another separator stays inside its line; a last line without a
    newline is marked as git marks it."""
    chunks = []
    for path in after:
        old = before.get(path)
        for line in difflib.unified_diff(
            lines_of(old or ""),
            lines_of(after[path]),
            fromfile=f"a/{path}" if old is not None else "/dev/null",
            tofile=f"b/{path}",
        ):
            chunks.append(line if line.endswith("\n") else f"{line}\n\\ No newline at end of file\n")
    return "".join(chunks)


def proposed_diff(against: Path | None = None) -> str:
    """The whole proposal: the fix and its regression test. Against the installed release's files by
    default; ``against`` a PyTorch checkout, its own files, with the test registered in test/test_jit.py
    (PyTorch's runner collects test/jit modules only through it), checked there with ``git apply --check``."""
    if against is None:
        sources = installed_sources((RECURSIVE, SCRIPT))
        missing = [path for path, text in sources.items() if text is None]
        if missing:
            raise PatchError(f"the installed torch lacks {', '.join(missing)}.")
        return unified_diff(sources, {**patched_sources(sources), TEST_PATH: REGRESSION_TEST})
    checkout = checkout_sources(against)
    diff = unified_diff(
        checkout,
        {**patched_sources(checkout), TEST_JIT: register_test(checkout[TEST_JIT]), TEST_PATH: REGRESSION_TEST},
    )
    _check_applies(diff, against)
    return diff


def checkout_sources(root: Path) -> dict[str, str]:
    """The two torch files and test/test_jit.py of a PyTorch checkout; one sentence when it is not one."""
    if not root.is_dir():
        raise PatchError(f"{root} is not a folder.")
    missing = [path for path in (RECURSIVE, SCRIPT, TEST_JIT) if not (root / path).is_file()]
    if missing:
        raise PatchError(f"{root} is not a PyTorch checkout: it lacks {', '.join(missing)}.")
    return {path: _read(root, path) for path in (RECURSIVE, SCRIPT, TEST_JIT)}


def _read(root: Path, path: str) -> str:
    """One checkout file as UTF-8 text; one sentence when it cannot be read or is not UTF-8."""
    try:
        data = (root / path).read_bytes()
    except OSError as err:
        raise PatchError(f"{root / path} cannot be read: {err.strerror or err}.") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise PatchError(f"{root / path} is not UTF-8 text (byte {err.start} is {data[err.start]:#04x}).") from None


def register_test(test_jit: str) -> str:
    """test/test_jit.py importing the new test class after its last ``from jit.`` import, as upstream does."""
    lines = lines_of(test_jit)
    imports = [i for i, line in enumerate(lines) if line.startswith("from jit.")]
    if not imports:
        raise PatchError(f"{TEST_JIT} imports no test/jit module; register the test by hand.")
    if REGISTRATION in test_jit:
        raise PatchError(f"{TEST_JIT} already imports the regression test.")
    lines.insert(imports[-1] + 1, REGISTRATION + "\n")
    return "".join(lines)


def _check_applies(diff: str, root: Path) -> None:
    if shutil.which("git") is None:
        raise PatchError("git is not installed, so the patch cannot be checked with git apply --check.")
    check = subprocess.run(["git", "apply", "--check", "-"], cwd=root, input=diff, capture_output=True, text=True)
    if check.returncode:
        reason = (check.stderr.strip().splitlines() or ["no reason given"])[0]
        raise PatchError(f"git apply --check refuses the patch in {root}: {one_line(reason, 200)}")
