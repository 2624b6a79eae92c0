"""The oracle's judgement, one concern per test: only matching behaviour is a match."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
import torch

from repro.catalogue import cause_of
from repro.catalogue.by_design import refusal
from repro.engine.oracle import (
    INSTANCES,
    DiffersFromEager,
    EagerFailed,
    ScenarioResult,
    ScriptRaised,
    Side,
    assert_like_eager,
    judge,
    missing_needs,
    run_scenario,
)
from repro.engine.scenarios import SCENARIOS, Scenario, uncovered_hook_apis
from repro.source_checks import installed_torch_root

RAN = Side({"hook calls": [["backward", "<the module itself>"]], "x.grad": [1.0]}, None)
BUG_ERROR = "RuntimeError: Could not cast attribute '_is_full_backward_hook' to type NoneType: ..."


def _scenario(api="register_forward_hook", needs=None):
    return Scenario(api, "synthetic", lambda m, rec: None, needs or (api,))


def _result(verdict, detail=""):
    return ScenarioResult(_scenario(), "script_method", verdict, detail)


def test_identical_observations_match():
    assert judge(RAN, RAN)[0] == "match"


def test_registering_without_raising_is_not_a_match():
    silent = Side({"hook calls": [], "x.grad": [1.0]}, None)
    verdict, detail = judge(silent, RAN)
    assert verdict == "differs" and "ScriptModule [] vs eager ['backward']" in detail


def test_same_hooks_with_other_arguments_differ():
    other_args = Side({"hook calls": [["backward", "<another module: X>"]], "x.grad": [1.0]}, None)
    assert judge(other_args, RAN) == ("differs", "hook calls: same hooks in the same order, different arguments")


def test_different_gradient_differs_and_names_it():
    verdict, detail = judge(Side({**RAN.observation, "x.grad": [0.0]}, None), RAN)
    assert verdict == "differs" and detail.startswith("x.grad:")


def test_script_error_raises_and_eager_error_is_an_error():
    assert judge(Side({}, BUG_ERROR), RAN) == ("raises", BUG_ERROR)
    assert judge(RAN, Side({}, "TypeError: x"))[0] == "error"


@pytest.mark.parametrize(
    "need", ["register_no_such_hook", "register_forward_hook(no_such_keyword)", "register_module_no_such_hook"]
)
def test_missing_api_or_keyword_is_unavailable_not_match(need):
    scenario = _scenario(needs=(need,))
    assert missing_needs(scenario) == [need]
    result = run_scenario(scenario, "script_method", "cpu")
    assert result.verdict == "unavailable" and need in result.detail


@pytest.mark.parametrize(
    ("verdict", "detail", "exception"),
    [("raises", BUG_ERROR, ScriptRaised), ("differs", "x", DiffersFromEager), ("error", "x", EagerFailed)],
)
def test_assert_like_eager_names_the_departure(verdict, detail, exception):
    with pytest.raises(exception):
        assert_like_eager(_result(verdict, detail=detail))


def test_table_covers_the_downstream_suite_and_more():
    apis = {s.api for s in SCENARIOS}
    assert len(SCENARIOS) >= 21 and len({s.key for s in SCENARIOS}) == len(SCENARIOS)
    assert apis >= {
        "register_full_backward_hook",
        "register_backward_hook",
        "register_full_backward_pre_hook",
        "register_forward_hook",
        "register_forward_pre_hook",
        "register_state_dict_pre_hook",
        "register_state_dict_post_hook",
        "register_load_state_dict_pre_hook",
        "register_load_state_dict_post_hook",
    }
    downstream = [s for s in SCENARIOS if s.downstream]  # torch_npu's TestScriptModuleHooks: 19 hook tests
    assert len(downstream) == 19 and sum("register_full_backward_hook" in s.apis for s in downstream) == 1


def test_every_hook_api_of_this_torch_has_a_scenario():
    assert uncovered_hook_apis() == []


def test_a_hook_api_torch_adds_is_reported_uncovered(monkeypatch):
    from torch.nn.modules import module

    monkeypatch.setattr(torch.nn.Module, "register_new_kind_of_hook", lambda self, hook: None, raising=False)
    monkeypatch.setattr(module, "register_module_new_kind_of_hook", lambda hook: None, raising=False)
    assert uncovered_hook_apis() == ["register_module_new_kind_of_hook", "register_new_kind_of_hook"]


def test_a_method_torchscript_stubs_out_is_refused_undocumented_with_its_source_line():
    """No PyTorch document or upstream test states the stubs as intended: refused, undocumented."""
    scenario = next(s for s in SCENARIOS if s.name == "on a submodule (m.linear)")
    result = run_scenario(scenario, "plain_forward", "cpu")
    assert result.verdict == "refused" and "register_forward_hook is not supported on ScriptModules" in result.detail
    path, line = result.detail.rsplit("(undocumented: ", 1)[1].rstrip(")").split(":")
    module = importlib.import_module(path.removesuffix(".py").replace("/", "."))  # the file torch runs from
    stub = Path(module.__file__).read_text().splitlines()[int(line) - 1]
    assert "is not supported on ScriptModules" in stub


def test_a_refusal_reached_through_a_path_the_user_did_not_call_is_not_by_design():
    error = "RuntimeError: _get_backward_hooks is not supported on ScriptModules"
    assert refusal({"register_module_full_backward_hook"}, error) is None
    assert refusal({"register_forward_hook"}, "RuntimeError: register_forward_hook is not supported on ScriptModules")


def test_first_and_later_instances_are_both_run():
    scenario = next(s for s in SCENARIOS if s.api == "register_forward_hook")
    first, later = (run_scenario(scenario, "script_method", "cpu", instance) for instance in INSTANCES)
    assert (first.instance, later.instance) == ("first", "later") and first.verdict == later.verdict == "match"


def test_a_model_torch_cannot_build_is_the_script_sides_error_not_a_crash(monkeypatch):
    """torch 1.13.1's ``torch.jit.script`` once failed on our eager class's string annotation: that is an
    observation of the ScriptModule side, which the report attributes or calls unexplained."""
    scenario = next(s for s in SCENARIOS if s.model == "scripted child")

    def broken_script(module):
        raise AttributeError("'str' object has no attribute '__module__'")

    monkeypatch.setattr(torch.jit, "script", broken_script)
    result = run_scenario(scenario, "torch.jit.script", "cpu")
    assert result.verdict == "raises"
    assert result.detail == "building the model raised AttributeError: 'str' object has no attribute '__module__'"


def test_an_exception_replaced_by_torch_jit_error_is_a_bug_not_a_design():
    """Upstream tracks the loss as open (pytorch/pytorch#54612): the always_call hook still runs, and the
    caller catching torch.jit.Error instead of ValueError is jit-error-replaces-exception's departure."""
    scenario = next(s for s in SCENARIOS if s.model == "raising")
    compiled, plain = (run_scenario(scenario, style, "cpu") for style in ("script_method", "plain_forward"))
    assert plain.verdict == "match" and compiled.verdict == "differs"
    assert compiled.script.observation["hook calls"] == [["forward (always_call)"]]
    assert cause_of(compiled) == "jit-error-replaces-exception"


def test_a_childs_other_class_is_a_designed_difference_with_its_line():
    """A child of a subclass is a RecursiveScriptModule (torch.jit.script's documentation says submodules are
    compiled): listing children differs only in the class met, which the run names with its torch line."""
    scenario = next(s for s in SCENARIOS if s.api == "children")
    result = run_scenario(scenario, "script_method", "cpu")
    assert result.verdict == "refused"
    assert result.script.observation["types"] == {"Linear": "RecursiveScriptModule"}
    assert result.eager.observation["types"] == {"Linear": "Linear"}
    path, line = result.detail.rsplit("(by design: ", 1)[1].rstrip(")").split(":")
    source = installed_torch_root() / path  # where the line is looked up (a patched torch may run elsewhere)
    assert "wrap_cpp_module" in source.read_text().splitlines()[int(line) - 1]
