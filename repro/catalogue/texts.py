"""The files of a bug's folder that upstream and users get as text: its regression test, its
paste-ready script and the code its upstream patch inserts into torch. They are real files (ruff
checks them all; tests run the first two) that the catalogue reads with ``importlib.resources``.
The first two import their shared models from ``repro.catalogue.pieces``; their text is the file
with that import replaced by the models' source, so it runs on a bare PyTorch checkout."""

from __future__ import annotations

import ast
from functools import cache
from importlib import resources

from repro.source_checks import parse_python

PIECES = "repro.catalogue.pieces"
INSERTED = "inserted.py"


def _read(package: str, name: str) -> str:
    return resources.files(package).joinpath(name).read_text(encoding="utf-8")


@cache
def _pieces() -> tuple[list[str], dict[str, str]]:
    """The pieces module's import lines, and each top-level class or function -> its source, decorators
    included."""
    text = _read("repro.catalogue", "pieces.py")
    lines = text.splitlines()
    imports, found = [], {}
    for node in parse_python(text).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.append(ast.get_source_segment(text, node) or "")
        elif isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            found[node.name] = "\n".join(lines[start - 1 : node.end_lineno])
    return imports, found


def rendered(package: str, name: str) -> str:
    """``name`` beside ``package``'s ``__init__.py``, with each import from the pieces module replaced by
    the source of what it imports."""
    text = _read(package, name)
    lines = text.splitlines(keepends=True)
    imports = [node for node in parse_python(text).body if isinstance(node, ast.ImportFrom) and node.module == PIECES]
    needed, pieces = _pieces()
    own = {line.strip() for line in lines}
    missing = "".join(f"{line}\n" for line in needed if line not in own)  # what the pieces use
    for node in reversed(imports):  # isort merges them into one; from the end, earlier lines still hold
        sources = "\n\n\n".join(pieces[alias.name] for alias in node.names)
        start = node.lineno - 1
        while start and not lines[start - 1].strip():  # the blank line isort puts before our own imports
            start -= 1
        end = node.end_lineno or node.lineno
        while end < len(lines) and not lines[end].strip():  # the blank lines after: two, as around a class
            end += 1
        lines[start:end] = [f"\n{missing}\n\n{sources}\n\n\n" if missing else f"\n\n{sources}\n\n\n"]
    return "".join(lines)


@cache
def _fragments(package: str) -> dict[str, tuple[str, ...]]:
    text = _read(package, INSERTED)
    lines = text.split("\n")
    found: dict[str, tuple[str, ...]] = {}
    for node in parse_python(text).body:
        if isinstance(node, ast.FunctionDef):
            if not lines[node.lineno - 1].rstrip().endswith(":"):
                raise ValueError(f"{package}: {INSERTED}: {node.name}'s signature is not on one line")
            found[node.name] = _dedented(lines[node.lineno : node.end_lineno])
        elif isinstance(node, ast.ClassDef):
            found[node.name] = _dedented(lines[node.lineno - 1 : node.end_lineno])
            for method in (m for m in node.body if isinstance(m, ast.FunctionDef)):
                start = min([method.lineno, *(d.lineno for d in method.decorator_list)])
                found[f"{node.name}.{method.name}"] = _dedented(lines[start - 1 : method.end_lineno])
    return found


def _dedented(lines: list[str]) -> tuple[str, ...]:
    margin = min(len(line) - len(line.lstrip()) for line in lines if line.strip())
    return tuple(line[margin:].rstrip() for line in lines)


def inserted(package: str, name: str) -> tuple[str, ...]:
    """The lines ``package``'s patch inserts into torch, from the folder's ``inserted.py``: a function's
    body (statements put inside one of torch's functions), a class whole, or for ``Class.method`` the
    method's definition (added to torch's class). ``inserted.py`` is never imported: its imports and
    its functions' parameters name what the lines use where they land, so ruff checks their names."""
    fragments = _fragments(package)
    if name not in fragments:
        raise ValueError(f"{package}: {INSERTED} defines no {name}")
    return fragments[name]
