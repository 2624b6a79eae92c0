"""An edit as data (repro/catalogue/edits.py): ``Insertion`` and ``MethodAddition`` put their lines where
their node is, once, and say in one sentence what sources without it lack."""

from __future__ import annotations

import ast

import pytest

from repro.catalogue import edits
from repro.catalogue.fixes import PatchError
from repro.source_checks import find

PATH = "torch/thing.py"
SOURCE = '''def save(m):
    """Saves."""
    if m is None:
        return
    write(m)


class ScriptModule:
    def __setattr__(self, attr, value):
        pass
'''
GUARD = ("if refused(m):", '    raise RuntimeError("cannot save this")')


def _insertion(where: edits.Where, locate=lambda tree: find(tree, ast.FunctionDef, "save")) -> edits.Insertion:
    return edits.Insertion(PATH, locate, where, GUARD, "no save here.", "cannot save this", "already refuses")


def _if(tree: ast.Module) -> ast.stmt | None:
    return edits.statement(tree, edits.if_testing("m is None"))


@pytest.mark.parametrize(
    ("insertion", "expected"),
    [
        (_insertion(edits.Where.AT_START), '    """Saves."""\n    if refused(m):\n'),
        (_insertion(edits.Where.BEFORE, _if), '    """Saves."""\n    if refused(m):\n'),
        (_insertion(edits.Where.AFTER, _if), "        return\n    if refused(m):\n"),
    ],
    ids=["at the start, after the docstring", "before the node", "after the node"],
)
def test_an_insertion_puts_its_lines_where_it_says_at_the_node_s_indentation(insertion, expected):
    patched = insertion({PATH: SOURCE})[PATH]
    assert expected in patched and 'raise RuntimeError("cannot save this")\n' in patched
    ast.parse(patched)


def test_an_insertion_refuses_the_sources_it_already_patched():
    once = _insertion(edits.Where.AT_START)({PATH: SOURCE})
    with pytest.raises(PatchError, match=f"^{PATH} already refuses.$"):
        _insertion(edits.Where.AT_START)(once)


def test_an_insertion_whose_node_is_gone_says_what_the_sources_lack():
    with pytest.raises(PatchError, match="^no save here.$"):
        _insertion(edits.Where.AT_START)({PATH: "x = 1\n"})


def test_an_insertion_whose_lines_lack_their_marker_cannot_be_declared():
    """Without the marker in its lines, a second application would not be refused."""
    with pytest.raises(ValueError, match="do not hold their marker"):
        edits.Insertion(PATH, _if, edits.Where.AFTER, ("pass",), "gone.", "cannot save this", "already")


def test_a_method_addition_goes_above_its_neighbour_once():
    method = ("def compile(self):", "    raise RuntimeError")
    compile_ = edits.MethodAddition(PATH, "ScriptModule", "__setattr__", method)
    patched = compile_({PATH: SOURCE})[PATH]
    assert "class ScriptModule:\n    def compile(self):\n        raise RuntimeError\n\n    def __setattr__" in patched
    with pytest.raises(PatchError, match="already defines compile"):
        compile_({PATH: patched})
