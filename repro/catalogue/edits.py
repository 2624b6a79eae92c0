"""How an edit changes torch's Python files: find a node with ``ast``, insert or replace lines at its
indentation, and say in one sentence (``PatchError``) where the sources lack the shape the edit
expects. Bug folders call these as ``edits.insert(...)``; nothing here knows a bug."""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import TypeVar

from repro.catalogue.fixes import PatchError, Sources
from repro.source_checks import parse_python


def unpatched(path: str, text: str, marker: str, already: str) -> None:
    """Refuses a second application: ``marker`` (what the patch writes) is in ``text`` already, and
    the sentence says what ``path`` ``already`` does."""
    if marker in text:
        raise PatchError(f"{path} {already}.")


def source(sources: Sources, path: str) -> str:
    text = sources.get(path)
    if text is None:
        raise PatchError(f"the torch sources lack {path}.")
    return text


def opened(sources: Sources, path: str) -> tuple[str, ast.Module]:
    """The text of ``path`` and its tree: where every edit starts."""
    text = source(sources, path)
    return text, parse(path, text)


_Found = TypeVar("_Found")


def required(found: _Found | None, problem: str) -> _Found:
    """``found``, or ``PatchError(problem)`` where the sources lack what an edit looks for."""
    if found is None:
        raise PatchError(problem)
    return found


def lines_of(text: str) -> list[str]:
    """``text``'s lines, ends kept, split on ``\\n`` only: as ``ast`` counts lines and ``git`` diffs them
    (``str.splitlines`` also splits on form feeds, ``\\x1c``-``\\x1e``, ``\\x85``, ``\\u2028``...)."""
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def parse(path: str, text: str) -> ast.Module:
    try:
        return parse_python(text)
    except SyntaxError as err:
        raise PatchError(f"{path} does not parse as Python (line {err.lineno}: {err.msg}).") from None
    except ValueError as err:  # a null byte
        raise PatchError(f"{path} does not parse as Python ({err}).") from None


def insert(text: str, before_line: int, new_lines: list[str], indent: str) -> str:
    """``new_lines``, each indented by ``indent``, inserted before line ``before_line`` (1-based)."""
    lines = lines_of(text)
    lines[before_line - 1 : before_line - 1] = [f"{indent}{line}".rstrip() + "\n" for line in new_lines]
    return "".join(lines)


def indent_of(text: str, lineno: int) -> str:
    line = lines_of(text)[lineno - 1]
    return line[: len(line) - len(line.lstrip())]


def body_start(function: ast.FunctionDef) -> int:
    """The line of ``function``'s first statement after its docstring (where a guard goes)."""
    first = function.body[0]
    has_docstring = (
        isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)
    )
    if not has_docstring:
        return first.lineno
    return function.body[1].lineno if len(function.body) > 1 else (first.end_lineno or first.lineno) + 1


def assignment(tree: ast.AST, name: str) -> ast.Assign | None:
    """The first ``name = ...`` anywhere in ``tree`` (module level, a class or an ``if`` block)."""
    return next(
        (
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
        ),
        None,
    )


def append_items(text: str, path: str, name: str, items: list[str]) -> str:
    """``text`` with string ``items`` added at the end of the multi-line list or set literal ``name``;
    one sentence where there is none, or where an item is already there."""
    node = assignment(parse(path, text), name)
    if node is None or not isinstance(node.value, (ast.List, ast.Set)) or not node.value.elts:
        raise PatchError(f"{path} has no {name} list or set to add to.")
    present = [item for item in items if any(isinstance(e, ast.Constant) and e.value == item for e in node.value.elts)]
    if present:
        raise PatchError(f"{path} already lists {present[0]!r} in {name}.")
    last = node.value.elts[-1]
    last_line = last.end_lineno or last.lineno  # ast.parse always sets end_lineno
    if last_line == node.lineno:
        raise PatchError(f"{path}: {name} is on one line; edit it by hand.")
    lines = lines_of(text)
    end = lines[last_line - 1]
    if not end.rstrip().endswith(","):  # keep the literal valid: no implicit concatenation
        lines[last_line - 1] = end.rstrip() + ",\n"
    return insert("".join(lines), last_line + 1, [f'"{item}",' for item in items], indent_of(text, last.lineno))


def add_method(text: str, path: str, cls: str, before: str, method: list[str]) -> str:
    """``method``'s lines added to the class ``cls`` that defines ``before``, just above it; one sentence
    where there is no such class, or the class already defines the method."""
    classes = [n for n in ast.walk(parse(path, text)) if isinstance(n, ast.ClassDef) and n.name == cls]
    for node in classes:
        defined = {f.name: f for f in node.body if isinstance(f, ast.FunctionDef)}
        if before in defined:
            name = method[0].split("def ", 1)[1].split("(", 1)[0]
            if name in defined:
                raise PatchError(f"{path}: {cls} already defines {name}.")
            anchor = defined[before]
            first = anchor.decorator_list[0].lineno if anchor.decorator_list else anchor.lineno
            return insert(text, first, [*method, ""], indent_of(text, anchor.lineno))
    raise PatchError(f"{path}: no class {cls} defining {before}.")


def statement(tree: ast.AST, found: Callable[[ast.stmt], bool]) -> ast.stmt | None:
    """The first statement anywhere in ``tree`` for which ``found`` holds."""
    return next((node for node in ast.walk(tree) if isinstance(node, ast.stmt) and found(node)), None)


def if_testing(condition: str) -> Callable[[ast.stmt], bool]:
    """``statement``'s test for an ``if`` whose condition reads ``condition`` (as ``ast.unparse`` writes it)."""
    return lambda node: isinstance(node, ast.If) and ast.unparse(node.test) == condition


def after(text: str, node: ast.stmt | ast.excepthandler, lines: list[str]) -> str:
    """``lines`` inserted after ``node``, at its indentation."""
    return insert(text, (node.end_lineno or node.lineno) + 1, lines, indent_of(text, node.lineno))


def at_start(text: str, node: ast.If | ast.FunctionDef, lines: list[str]) -> str:
    """``lines`` inserted as the first statements of ``node``'s block (after a function's docstring)."""
    line = body_start(node) if isinstance(node, ast.FunctionDef) else node.body[0].lineno
    return insert(text, line, lines, indent_of(text, node.body[0].lineno))


def replaced_by(text: str, node: ast.stmt, lines: list[str]) -> str:
    """``node`` (all its lines) replaced by ``lines``, at its indentation."""
    old = lines_of(text)
    start, end = node.lineno, node.end_lineno or node.lineno
    indent = indent_of(text, start)
    old[start - 1 : end] = [f"{indent}{line}".rstrip() + "\n" for line in lines]
    return "".join(old)


class Where(Enum):
    """Where an ``Insertion``'s lines go, relative to the node it finds."""

    BEFORE = "before"
    AFTER = "after"
    AT_START = "at the start of its block"


@dataclass(frozen=True)
class Insertion:
    """An edit as data, the shape of most patches: ``lines`` put ``where`` the node ``locate`` finds
    in ``path``. ``missing`` is the sentence for sources without that node; ``marker``, a text the
    lines hold, refuses a second application (saying the file ``already`` does it)."""

    path: str
    locate: Callable[[ast.Module], ast.AST | None]
    where: Where
    lines: tuple[str, ...]
    missing: str
    marker: str
    already: str

    def __post_init__(self) -> None:
        if not any(self.marker in line for line in self.lines):
            raise ValueError(f"the lines inserted into {self.path} do not hold their marker {self.marker!r}")

    def __call__(self, sources: Sources) -> dict[str, str]:
        text, tree = opened(sources, self.path)
        unpatched(self.path, text, self.marker, self.already)
        return {self.path: self.into(text, tree)}

    def into(self, text: str, tree: ast.Module) -> str:
        """``text`` (whose tree is ``tree``) with the lines inserted."""
        node = required(self.locate(tree), self.missing)
        lines = list(self.lines)
        if self.where is Where.AFTER and isinstance(node, (ast.stmt, ast.excepthandler)):
            return after(text, node, lines)
        if self.where is Where.AT_START and isinstance(node, (ast.If, ast.FunctionDef)):
            return at_start(text, node, lines)
        if self.where is Where.BEFORE and isinstance(node, ast.stmt):
            return insert(text, node.lineno, lines, indent_of(text, node.lineno))
        raise PatchError(f"{self.path}: cannot insert {self.where.value} a {type(node).__name__}.")


@dataclass(frozen=True)
class MethodAddition:
    """An edit that adds one method (``lines``, its whole definition) to the class ``cls`` of ``path``,
    above its method ``before``; refused where the class already defines it."""

    path: str
    cls: str
    before: str
    lines: tuple[str, ...]

    def __call__(self, sources: Sources) -> dict[str, str]:
        return {self.path: add_method(source(sources, self.path), self.path, self.cls, self.before, list(self.lines))}
