"""Traits (repro/traits.py): one language for the catalogue's named shapes and the explorer's generated
models. A named shape's declared traits agree with the generated model of the same make (three of them
also with the model the engine builds), and each bug's scope predicate holds wherever its scope was
measured."""

from __future__ import annotations

import pytest
import torch

from repro.catalogue import BUGS
from repro.catalogue.bug import shape_traits
from repro.engine.models import MODELS, build_scripted, styles_of
from repro.explore.generate import Base, Level, ModelSpec, Op
from repro.traits import EAGER, PLAIN_FORWARD, SCRIPT_METHOD

NAMED = [(shape, style) for shape in MODELS for style in styles_of(shape)]
SUBCLASS_BASE = {SCRIPT_METHOD: Base.SCRIPT_METHOD, PLAIN_FORWARD: Base.PLAIN_FORWARD}


def _level(base, children=(), ops=(), hooked=False, buffers=()):
    return Level(base, 0, buffers, tuple(children), tuple(ops), tuple(range(len(children))), hooked=hooked)


def _generated(shape: str, base: Base) -> Level:
    """The generated model of the same make as a named shape (repro.catalogue.bug.SHAPE_WORDS)."""
    inner = _level(Base.SCRIPT_METHOD, [None])  # a subclass as child, with a script_method forward
    return {
        "flat": _level(base, ops=[Op.TANH]),
        "child": _level(base, [None]),
        "child between": _level(base, [None], [Op.TANH]),
        "several children": _level(base, [None, None]),
        "buffers only": _level(base, ops=[Op.MUL_BUFFER, Op.TANH], buffers=(True,)),
        "raising": _level(base, ops=[Op.RAISE]),
        "in eager parent": _level(Base.EAGER, [_level(base)]),
        "in eager parent, with child": _level(Base.EAGER, [_level(base, [None])]),
        "subclass child": _level(base, [_level(Base.SCRIPT_METHOD)]),
        "two deep": _level(base, [inner]),
        "three deep": _level(base, [_level(Base.SCRIPT_METHOD, [inner])]),
        "hooked in __init__, after children": _level(base, [None], hooked=True),
        "non-persistent buffer child": _level(base, [None, _level(Base.EAGER, ops=[Op.MUL_BUFFER], buffers=(False,))]),
    }[shape]


@pytest.mark.parametrize(
    "shape, style",
    [(shape, style) for shape in ("flat", "child", "child between", "several children", "buffers only",
     "raising", "in eager parent", "in eager parent, with child", "subclass child", "two deep", "three deep",
     "hooked in __init__, after children", "non-persistent buffer child") for style in SUBCLASS_BASE],
)  # fmt: skip
def test_a_generated_model_has_the_traits_of_the_named_shape_of_its_make(shape, style):
    spec = ModelSpec(_generated(shape, SUBCLASS_BASE[style]), 2, 2)
    assert spec.traits() == shape_traits(shape, style)


def test_a_generated_scripted_child_has_the_traits_of_the_named_one():
    spec = ModelSpec(_level(Base.EAGER, [_level(Base.SCRIPTED_EAGER)]), 2, 2)
    assert spec.traits() == shape_traits("scripted child", "torch.jit.script")


@pytest.mark.parametrize(
    "root, expected",
    [
        # a subclass inside an eager module that torch.jit.script compiles is called inside TorchScript
        (_level(Base.SCRIPTED_EAGER, [_level(Base.PLAIN_FORWARD)]), {"subclass_inside_torchscript": True}),
        # an eager child of a subclass is compiled with it; its raise is compiled code's
        (_level(Base.PLAIN_FORWARD, [_level(Base.EAGER, ops=[Op.RAISE])]), {"raises_compiled": True}),
        # ... but not an eager child of an eager module
        (_level(Base.EAGER, [_level(Base.EAGER, ops=[Op.RAISE])]), {"raises_compiled": False, "compiled": False}),
        # hooks in __init__ of a script_method subclass are compiled with it: not the plain forward's trait
        (_level(Base.SCRIPT_METHOD, hooked=True), {"init_hooks_plain_forward": False}),
    ],
)
def test_generated_traits_follow_what_torchscript_compiles(root, expected):
    traits = ModelSpec(root, 2, 3).traits().as_dict()
    assert {name: traits[name] for name in expected} == expected
    assert traits["batch_is_features"] is False


@pytest.mark.parametrize(
    "shape, style", [named for named in NAMED if not shape_traits(*named).init_hooks_plain_forward]
)  # those are init-hooks-break-plain-forward's: they do not build
def test_a_named_shapes_traits_agree_with_the_model_the_engine_builds(shape, style):
    model = build_scripted(shape, style, "first", "cpu")
    recursive = torch.jit.RecursiveScriptModule

    def subclass(module: torch.nn.Module) -> bool:
        return isinstance(module, torch.jit.ScriptModule) and not isinstance(module, recursive)

    traits = shape_traits(shape, style)
    assert traits.root == (style if subclass(model) else EAGER)
    assert traits.subclass == any(subclass(m) for m in model.modules())
    linear = [c for m in model.modules() if subclass(m) for c in m.children() if c.original_name == "Linear"]
    assert traits.linear_in_script_module == bool(linear)


@pytest.mark.parametrize("bug", BUGS.values(), ids=lambda bug: bug.id)
def test_each_bugs_reach_holds_wherever_its_scope_was_measured(bug):
    """A predicate narrower than the named scope would drop departures the catalogue proved."""
    outside = [(shape, style) for shape, style, _ in bug.scope if not bug.reach(shape_traits(shape, style))]
    assert not outside


@pytest.mark.parametrize("bug", BUGS.values(), ids=lambda bug: bug.id)
def test_no_bug_reaches_a_model_without_torchscript(bug):
    """A predicate that holds everywhere would let its recogniser claim any generated model again."""
    eager = ModelSpec(_level(Base.EAGER, [None, _level(Base.EAGER, ops=[Op.RAISE, Op.TANH])]), 2, 2)
    assert not bug.reach(eager.traits())


def test_a_reach_tells_named_shapes_apart():
    """Most bugs hold on some named shapes only: their predicates are not all the same."""
    reaches = {tuple(bug.reach(shape_traits(*named)) for named in NAMED) for bug in BUGS.values()}
    assert len(reaches) >= 10
