"""Static verdict from torch's sources, read with ``ast`` only (never imported or run).

Used on sources read out of remote wheels by the tracker, and on the installed torch's
files by ``python -m repro --explain``.

Each bug's static signature is a tuple of pieces its catalogue module holds, each checked with
file and line as evidence; this module has what they share. The original bug's three:
  1. ``torch/jit/_recursive.py``: ``ignored_attributes`` lacks ``_is_full_backward_hook``;
  2. ``torch/nn/modules/module.py``: ``register_full_backward_hook`` assigns
     ``self._is_full_backward_hook = True`` through normal attribute assignment;
  3. ``torch/jit/_script.py``: ``ScriptModule.__setattr__`` forwards to the inner module
     (``setattr(self._actual_script_module, ...)``) without special-casing the flag.
All three intact: ``present``. Any differs: ``changed`` (needs a dynamic confirmation).
Where a release was confirmed present, each bug's fingerprint (a digest of the functions and
assignments that matter, docstrings left out) is the stricter test: ``present`` only when they are
unchanged from the latest release confirmed present, so a fix written another way (the flag named
through a constant, a C++-side change that rewrites a Python caller) reads ``changed``.
``ScriptModule``/``script_method`` gone, or raising for valid input (unconditionally, or unless an
environment variable opts in): ``removed``; an argument check that raises for bad input is not
removal. A file missing or unparsable: ``unknown``.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from repro.vocabulary import StaticStatus

if TYPE_CHECKING:  # typing.TypeGuard is Python 3.10+; annotations are never evaluated here
    from collections.abc import Iterator
    from typing import TypeGuard

FLAG = "_is_full_backward_hook"
RECURSIVE_PY, SCRIPT_PY, MODULE_PY = "torch/jit/_recursive.py", "torch/jit/_script.py", "torch/nn/modules/module.py"


@dataclass(frozen=True)
class StaticVerdict:
    verdict: StaticStatus
    evidence: list[str]
    fingerprint: dict[str, str] = field(default_factory=dict)  # "path:name" -> digest, of what matters


Fingerprinted = tuple[tuple[str, str], ...]  # (path, "Class.method" or a module-level name)
Reference = tuple[str, dict[str, str]]  # the latest release confirmed present, and its fingerprint


def installed_torch_root() -> Path:
    """The folder holding the installed ``torch`` package, found without importing it."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("torch cannot be imported: it is not installed for this Python")
    return Path(next(iter(spec.submodule_search_locations))).parent


def installed_sources(paths: tuple[str, ...] = (RECURSIVE_PY, SCRIPT_PY, MODULE_PY)) -> dict[str, str | None]:
    """The installed torch's files, keyed as in a wheel or a PyTorch checkout."""
    root = installed_torch_root()
    return {p: (root / p).read_text(encoding="utf-8") if (root / p).is_file() else None for p in paths}


def loaded_sources() -> dict[str, str | None]:
    """The files the running process really imported for the three modules (which differ
    from the installed ones when a candidate serves patched sources)."""
    modules = {
        path: importlib.import_module(path[:-3].replace("/", ".")) for path in (RECURSIVE_PY, SCRIPT_PY, MODULE_PY)
    }
    # the loader's text: a patched module is compiled under the installed file's name
    return {path: module.__spec__.loader.get_source(module.__name__) for path, module in modules.items()}  # type: ignore[union-attr]


Trees = dict[str, ast.Module]
Check = Callable[[Trees], tuple[bool, str]]  # one piece of a bug: (intact, evidence with file:line)


def static_verdict(
    sources: Mapping[str, str | None],
    checks: tuple[Check, ...],
    applies: Callable[[Trees], str | None] = lambda trees: None,
    fingerprinted: Fingerprinted = (),
    reference: Reference | None = None,
) -> StaticVerdict:
    """Parse the three files once, then judge one bug: ``not-applicable`` when ``applies`` names an API
    missing from module.py; against ``reference`` (the latest release confirmed present), ``present``
    only when every fingerprinted function is unchanged; without one, ``present`` when every piece is
    intact; else ``changed``."""
    trees: Trees = {}
    for path in (MODULE_PY, RECURSIVE_PY, SCRIPT_PY):  # module.py first: whether the bug's API exists is decided there
        text = sources.get(path)
        if text is None:
            return StaticVerdict(StaticStatus.UNKNOWN, [f"{path}: missing from the wheel"])
        try:
            trees[path] = _parse(text)
        except SyntaxError as err:
            return StaticVerdict(StaticStatus.UNKNOWN, [f"{path}:{err.lineno}: unparsable ({err.msg})"])
        missing = applies(trees) if path == MODULE_PY else None
        if missing:  # a release before the API: the other files (older wheels lack some) do not matter
            return StaticVerdict(StaticStatus.NOT_APPLICABLE, [missing])
    removed = _torchscript_removed(trees[SCRIPT_PY])
    if removed:
        return StaticVerdict(StaticStatus.REMOVED, removed)
    prints = fingerprint(trees, fingerprinted)
    pieces = [check(trees) for check in checks]
    results = [text for _, text in pieces]
    if reference and prints:
        release, known = reference
        differing = [name for name, digest in prints.items() if known.get(name) != digest]
        if not differing:
            return StaticVerdict(
                StaticStatus.PRESENT,
                [f"unchanged from {release} (confirmed present): {', '.join(prints)}", *results],
                prints,
            )
        return StaticVerdict(
            StaticStatus.CHANGED,
            [f"differs from {release} (confirmed present): {', '.join(differing)}", *results],
            prints,
        )
    intact = all(ok for ok, _ in pieces)
    return StaticVerdict(StaticStatus.PRESENT if intact else StaticStatus.CHANGED, results, prints)


def fingerprint(trees: Trees, fingerprinted: Fingerprinted) -> dict[str, str]:
    """A digest of each function, class or assignment that matters (``absent`` where there is none)."""
    return {f"{path}:{name}": _digest(locate(trees[path], name)) for path, name in fingerprinted}


def locate(tree: ast.AST, dotted: str) -> ast.AST | None:
    """``Class.method``, or a module-level function, class or assignment, wherever a block nests it."""
    node: ast.AST | None = tree
    for part in dotted.split("."):
        node = next((n for n in ast.walk(node) if n is not node and _named(n) == part), None) if node else None
    return node


def _named(node: ast.AST) -> str | None:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    return None


def _digest(node: ast.AST | None) -> str:
    """What the code does, not how it is laid out or documented: the AST without docstrings."""
    return "absent" if node is None else hashlib.sha256(repr(_bare(node)).encode()).hexdigest()[:16]


def _bare(value: object) -> object:
    """An AST as nested tuples, without positions and without docstrings (read, never copied)."""
    if isinstance(value, list):
        return [_bare(item) for item in value]
    if not isinstance(value, ast.AST):
        return value
    fields = dict(ast.iter_fields(value))
    body = fields.get("body")
    if isinstance(value, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and body and _is_docstring(body[0]):
        fields["body"] = body[1:]
    return type(value).__name__, tuple((name, _bare(item)) for name, item in fields.items())


def _is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


@functools.lru_cache(maxsize=16)  # the files of the releases probed at once (--jobs)
def _parse(text: str) -> ast.Module:
    """One parse of a file per release, whichever catalogued bugs then read it (the checks only read)."""
    return parse_python(text)


_PARSING = threading.RLock()  # re-entrant: a finalizer run by the collector mid-parse may parse too


def parse_python(text: str) -> ast.Module:
    """``ast.parse``, one thread at a time: CPython 3.11 keeps the AST constructor's recursion depth in
    state all threads share, so two threads parsing at once (the tracker probes releases in threads)
    can fail with ``SystemError: AST constructor recursion depth mismatch`` (python/cpython#106905;
    tests/test_source_checks.py reproduces it with bare ``ast.parse``)."""
    with _PARSING:
        return ast.parse(text)


_Named = TypeVar("_Named", bound=ast.AST)  # a node kind with a name: ClassDef, FunctionDef


def find(tree: ast.AST, kind: type[_Named], name: str) -> _Named | None:
    return next((n for n in ast.walk(tree) if isinstance(n, kind) and getattr(n, "name", None) == name), None)


def method(tree: ast.AST, cls: str, name: str) -> ast.FunctionDef | None:
    owner = find(tree, ast.ClassDef, cls)
    return find(owner, ast.FunctionDef, name) if owner else None


def call_impl_uses(trees: Trees, name: str) -> ast.AST | None:
    """The first place ``Module._call_impl`` names ``name`` (an attribute or a variable), or None."""
    call_impl = method(trees[MODULE_PY], "Module", "_call_impl")
    return (
        next(
            (node for node in ast.walk(call_impl) if name in (getattr(node, "attr", None), getattr(node, "id", None))),
            None,
        )
        if call_impl
        else None
    )


def find_assignment(tree: ast.AST, name: str) -> ast.Assign | None:
    """The first ``name = ...`` anywhere in ``tree`` (module level or nested in a block)."""
    return next(
        (node for node in ast.walk(tree) if assigns(node, lambda t: isinstance(t, ast.Name) and t.id == name)), None
    )


def mentions(node: ast.AST, text: str) -> bool:
    """Does ``node`` contain the string constant ``text`` (an attribute name spelled out)?"""
    return any(isinstance(n, ast.Constant) and n.value == text for n in ast.walk(node))


def _torchscript_removed(tree: ast.Module) -> list[str]:
    script_module = find(tree, ast.ClassDef, "ScriptModule")
    script_method = find(tree, ast.FunctionDef, "script_method")
    if script_module is None or script_method is None:
        missing = " and ".join(
            n for n, node in (("ScriptModule", script_module), ("script_method", script_method)) if node is None
        )
        return [f"{SCRIPT_PY}: {missing} no longer defined"]
    for node in (script_method, method(tree, "ScriptMeta", "__init__")):
        raising = _raises_for_valid_input(node) if node else None
        if raising and node:
            return [f"{SCRIPT_PY}:{raising.lineno}: {node.name} now raises ({ast.unparse(raising)[:80]})"]
    return []


def _raises_for_valid_input(function: ast.FunctionDef) -> ast.Raise | None:
    """A ``raise`` at the top of the body, or in a branch whose condition reads only environment
    variables (``if not os.environ.get("...")``: removed unless the user opts in). One under a condition
    on the arguments is an argument check, which valid input never reaches."""
    for statement in function.body:
        if isinstance(statement, ast.Raise):
            return statement
        if isinstance(statement, ast.If) and _reads_only_environment(statement.test):
            raising = next((s for s in [*statement.body, *statement.orelse] if isinstance(s, ast.Raise)), None)
            if raising:
                return raising
    return None


def _reads_only_environment(test: ast.expr) -> bool:
    names = {n.id for n in ast.walk(test) if isinstance(n, ast.Name)}
    attributes = {n.attr for n in ast.walk(test) if isinstance(n, ast.Attribute)}
    environment = {"environ", "getenv"}
    return bool((names | attributes) & environment) and names <= {"os", *environment}


def assigns(node: ast.AST, target: Callable[[ast.expr], bool]) -> TypeGuard[ast.Assign]:
    return isinstance(node, ast.Assign) and any(target(t) for t in node.targets)


def mentions_flag(node: ast.AST) -> bool:
    return mentions(node, FLAG)


def ignored_attributes_node(tree: ast.Module) -> ast.Assign | None:
    """The module-level ``ignored_attributes = [...]`` of torch/jit/_recursive.py."""
    return next(
        (
            node
            for node in tree.body
            if assigns(node, lambda t: isinstance(t, ast.Name) and t.id == "ignored_attributes")
        ),
        None,
    )


def forwarding_call(tree: ast.Module) -> tuple[ast.FunctionDef | None, ast.Call | None]:
    """``ScriptModule.__setattr__`` and its ``setattr(self._actual_script_module, ...)`` call."""
    setattr_method = method(tree, "ScriptModule", "__setattr__")
    calls: Iterator[ast.Call] = (
        (
            node
            for node in ast.walk(setattr_method)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "setattr"
            and node.args
            and isinstance(node.args[0], ast.Attribute)
            and node.args[0].attr == "_actual_script_module"
        )
        if setattr_method
        else iter(())
    )
    return setattr_method, next(calls, None)


def setattr_forwards(attribute: str) -> Check:
    """The piece shared by the bugs whose assignment ``ScriptModule.__setattr__`` forwards to the
    inner module: it forwards, and does not special-case ``attribute``."""

    def check(trees: Trees) -> tuple[bool, str]:
        setattr_method, call = forwarding_call(trees[SCRIPT_PY])
        if setattr_method is None:
            return False, f"{SCRIPT_PY}: ScriptModule.__setattr__ not found"
        if call is None:
            return False, (
                f"{SCRIPT_PY}:{setattr_method.lineno}: ScriptModule.__setattr__ no longer forwards to the inner module"
            )
        if mentions(setattr_method, attribute):
            return False, f"{SCRIPT_PY}:{setattr_method.lineno}: ScriptModule.__setattr__ special-cases {attribute!r}"
        return True, f"{SCRIPT_PY}:{call.lineno}: ScriptModule.__setattr__ forwards to _actual_script_module"

    return check
