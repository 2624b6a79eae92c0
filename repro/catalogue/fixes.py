"""What a bug's module holds about fixing it: candidate fixes and the upstream patch, as data.

A candidate is either a change applied to torch in memory after it is imported (``apply``, reverted
when the block ends) or a change to torch's Python files (``edit``: installed text in, patched text
out), which is served in place of the installed files before torch is imported, in a process of its
own. The upstream patch is an ``edit`` too, with a regression test in upstream's style. Edits locate
lines with ``ast``, so that they apply to whichever release is installed, and say in one sentence
(``PatchError``) when the sources do not have the shape they expect. Judging is the filing kit's
(``repro.filing.candidates``): this module imports neither torch nor the engine.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from repro.catalogue.texts import rendered
from repro.source_checks import parse_python

Sources = Mapping[str, "str | None"]  # path as in a PyTorch checkout -> text (None: the file is absent)
Edit = Callable[[Sources], dict[str, str]]  # the files it changes, patched; PatchError when it cannot


class PatchError(Exception):
    """The sources do not have the shape an edit expects (one sentence)."""


@dataclass(frozen=True)
class Candidate:
    name: str  # unique within its bug; "upstream-patch" is the bug's UpstreamPatch
    side: str  # "upstream" (a change to torch) or "user" (what a user's code can do)
    summary: str
    apply: Callable[[], AbstractContextManager[Any]] | None = None  # in memory, after torch is imported
    edit: Edit | None = None  # torch's files, served before torch is imported
    # Where no Python change can match eager, a candidate may turn a silent departure into an error:
    # the text that error holds ("loud" only when every departing run raises it).
    refusal: str = ""

    @property
    def in_process(self) -> bool:
        """Applied and reverted after torch is imported (else judged in a process of its own)."""
        return self.apply is not None


TEST_JIT = "test/test_jit.py"  # PyTorch's runner collects test/jit modules only through it
TEST_QUANTIZATION = "test/test_quantization.py"  # and test/quantization modules through this


@dataclass(frozen=True)
class RegressionTest:
    path: str  # a new file, as in a PyTorch checkout (test/jit/..., test/export/...)
    text: str
    test_class: str = ""  # the TestCase in it, which ``runner`` imports
    runner: str = ""  # the file upstream's runner collects it through, "" where it collects the file itself

    @property
    def registration(self) -> str:
        """The line the runner gets: an import of the test class, as upstream writes them."""
        module = self.path.removeprefix("test/").removesuffix(".py").replace("/", ".")
        return f"from {module} import {self.test_class}  # noqa: F401"

    @property
    def after(self) -> str:
        """The runner's lines the registration follows: the imports of the test's own folder."""
        return f"from {self.path.removeprefix('test/').rpartition('/')[0].replace('/', '.')}."


@dataclass(frozen=True)
class UpstreamPatch:
    """The fix proposed upstream: ``edit`` over ``files`` plus its regression test. A ``refusal`` patch
    is "loud": the cause lives in C++ (``cpp`` names where), and the patch makes the departure an error."""

    summary: str
    files: tuple[str, ...]
    edit: Edit
    test: RegressionTest
    refusal: str = ""
    cpp: str = ""
    # what it leaves departing, as ``--candidates`` measured it: a patch that is neither a fix nor loud
    # says so wherever it is named ("incomplete"), never "fix"
    leaves: str = ""

    @property
    def kind(self) -> str:
        """How ``--list-bugs`` and the docs name it: ``fix``, ``loud`` or ``incomplete``."""
        return "incomplete" if self.leaves else "loud" if self.refusal else "fix"

    def candidate(self) -> Candidate:
        return Candidate("upstream-patch", "upstream", self.summary, edit=self.edit, refusal=self.refusal)


@dataclass(frozen=True)
class Fixes:
    patch: UpstreamPatch
    candidates: tuple[Candidate, ...] = ()  # the others: one-liners people propose, user-side changes

    def all(self) -> dict[str, Candidate]:
        """Every candidate by name, the upstream patch included."""
        return {c.name: c for c in (*self.candidates, self.patch.candidate())}


def regression_test(package: str, path: str, runner: str = "") -> RegressionTest:
    """The regression test beside a bug's ``__init__.py`` (``regression_test.py``, a real file that ruff
    and mypy check), as upstream gets it at ``path``; its TestCase is the file's one ``TestCase`` class."""
    text = rendered(package, "regression_test.py")
    cases = [
        node.name
        for node in parse_python(text).body
        if isinstance(node, ast.ClassDef) and any(ast.unparse(base) == "TestCase" for base in node.bases)
    ]
    if len(cases) != 1:
        raise ValueError(f"{package}: regression_test.py holds {len(cases)} TestCase classes, not one.")
    return RegressionTest(path, text, cases[0] if runner else "", runner)
