"""The generator (repro/explore/generate.py): every drawn model's eager twin builds and runs at its
size, and the ScriptModule twin differs from it only in what the text says it should."""

from __future__ import annotations

import ast

import torch
from hypothesis import HealthCheck, given, settings

from repro.explore.generate import Base, Level, ModelSpec, Op, source, specs
from repro.explore.loading import forget, loaded

FEW = settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))


@FEW
@given(specs())
def test_every_eager_twin_builds_and_runs_at_its_size(spec):
    module = loaded(source(spec, scripted=False), "eager")
    try:
        model = module.Root()
        y = model(torch.ones(spec.batch, spec.features))
        assert y.shape == (spec.batch, spec.features)
    finally:
        forget(module)


@FEW
@given(specs())
def test_the_twins_texts_differ_only_in_bases_script_method_and_jit_script(spec):
    scripted, eager = source(spec, scripted=True), source(spec, scripted=False)
    ast.parse(scripted)
    stripped = scripted.replace("torch.jit.ScriptModule", "torch.nn.Module").replace(
        "    @torch.jit.script_method\n", ""
    )
    for name, _ in spec.levels():
        stripped = stripped.replace(f"torch.jit.script({name}())", f"{name}()")
    assert stripped == eager


def test_sizes_are_sometimes_equal_and_levels_reach_depth_three():
    """Metadata checks (checkpoint's) hide silent departures where batch equals features; and the
    issue asks for depth 1-3."""
    seen: list[ModelSpec] = []

    @settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(specs())
    def collect(spec):
        seen.append(spec)

    collect()
    assert any(s.batch == s.features for s in seen) and any(s.batch != s.features for s in seen)
    assert {s.root.depth for s in seen} == {1, 2, 3}
    assert {level.base for s in seen for _, level in s.levels()} == set(Base)


def test_a_body_uses_only_members_its_level_has_and_raises_first():
    from repro.explore.generate import consistent

    level = consistent(Level(Base.EAGER, 0, (), (), (Op.MUL_BUFFER, Op.TANH, Op.RAISE, Op.TANH), ()))
    assert level.ops == (Op.RAISE, Op.TANH)
