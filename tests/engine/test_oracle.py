"""The oracle's judgement, one concern per test: only matching behaviour is a match."""

from __future__ import annotations

import importlib
import inspect
import os
import signal
import time
from functools import partial

import pytest
import torch

from helpers import A_BUG
from repro.catalogue import cause_of, explain
from repro.engine.by_design import refusal
from repro.engine.compilations import counted
from repro.engine.models import MODELS, build_scripted, styles_of
from repro.engine.oracle import (
    INSTANCES,
    DiffersFromEager,
    EagerFailed,
    ScenarioResult,
    ScriptRaised,
    Side,
    assert_like_eager,
    judge,
    observe,
    run_all,
    run_scenario,
)
from repro.engine.scenarios import SCENARIOS, Scenario, uncovered_hook_apis
from repro.engine.scenarios.table import missing_needs
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
    assert verdict == "differs" and detail == "x.grad[0]: ScriptModule 0.0 vs eager 1.0"


def test_script_error_raises_and_eager_error_is_an_error():
    assert judge(Side({}, BUG_ERROR), RAN) == ("raises", BUG_ERROR)
    assert judge(RAN, Side({}, "TypeError: x"))[0] == "error"


@pytest.mark.parametrize(
    ("scripted", "eager", "said"),
    [
        (
            {"output": {"class": "Tensor", "dtype": "torch.float32", "shape": [2, 2], "requires_grad": False}},
            {"output": {"class": "Tensor", "dtype": "torch.float32", "shape": [2, 2], "requires_grad": True}},
            "output['requires_grad']: ScriptModule False vs eager True",
        ),
        (
            {"types": {"Net": "Net", "Linear": "RecursiveScriptModule", "ReLU": "RecursiveScriptModule"}},
            {"types": {"Net": "Net", "Linear": "Linear", "ReLU": "ReLU"}},
            "types['Linear']: ScriptModule 'RecursiveScriptModule' vs eager 'Linear'",
        ),
        ({"grads": [[1.0], [2.0]]}, {"grads": [[1.0], [3.0]]}, "grads[1][0]: ScriptModule 2.0 vs eager 3.0"),
        ({"state": {"a": 1}}, {"state": {"a": 1, "b": 2}}, "state['b']: ScriptModule absent vs eager 2"),
        ({"values": list(range(300))}, {"values": [0]}, "values: ScriptModule [0, 1, 2,"),
    ],
    ids=["a record's field", "a dict's entry", "a list's item", "a key one side lacks", "a long value"],
)
def test_a_difference_names_what_differs_inside_a_record(scripted, eager, said):
    """The detail cut each side at 60 characters: "output: ScriptModule {'class': 'Tensor', 'dtype':
    'torch.float32', 'shape': [2... vs eager {...same...", the difference (requires_grad) cut off."""
    verdict, detail = judge(Side(scripted, None), Side(eager, None))
    assert verdict == "differs" and detail.startswith(said), detail
    assert "..." not in detail or "characters; --json)" in detail


@pytest.mark.parametrize(
    "need", ["register_no_such_hook", "register_forward_hook(no_such_keyword)", "register_module_no_such_hook"]
)
def test_missing_api_or_keyword_is_unavailable_not_match(need):
    scenario = _scenario(needs=(need,))
    assert missing_needs(scenario) == [need]
    result = run_scenario(scenario, "script_method", "cpu", explains=explain)
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
    assert len({s.key for s in SCENARIOS}) == len(SCENARIOS)  # no two scenarios under one key
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
    result = run_scenario(scenario, "plain_forward", "cpu", explains=explain)
    assert result.verdict == "refused" and "register_forward_hook is not supported on ScriptModules" in result.detail
    path, line = result.detail.rsplit("(undocumented: ", 1)[1].rstrip(")").split(":")
    module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
    # the text torch runs: a patched torch (run_patched) compiles its own under the installed file's name
    stub = inspect.getsource(module).splitlines()[int(line) - 1]
    assert "is not supported on ScriptModules" in stub


def test_a_refusal_reached_through_a_path_the_user_did_not_call_is_not_by_design():
    error = "RuntimeError: _get_backward_hooks is not supported on ScriptModules"
    assert refusal({"register_module_full_backward_hook"}, error) is None
    assert refusal({"register_forward_hook"}, "RuntimeError: register_forward_hook is not supported on ScriptModules")


def test_first_and_later_instances_are_both_run():
    scenario = next(s for s in SCENARIOS if s.api == "register_forward_hook")
    first, later = (
        run_scenario(scenario, "script_method", "cpu", instance, explains=explain) for instance in INSTANCES
    )
    assert (first.instance, later.instance) == ("first", "later") and first.verdict == later.verdict == "match"


def test_a_model_torch_cannot_build_is_the_script_sides_error_not_a_crash(monkeypatch):
    """torch 1.13.1's ``torch.jit.script`` once failed on our eager class's string annotation: that is an
    observation of the ScriptModule side, which the report attributes or calls unexplained."""
    scenario = next(s for s in SCENARIOS if s.model == "scripted child")

    def broken_script(module):
        raise AttributeError("'str' object has no attribute '__module__'")

    monkeypatch.setattr(torch.jit, "script", broken_script)
    result = run_scenario(scenario, "torch.jit.script", "cpu", explains=explain)
    assert result.verdict == "raises"
    assert result.detail == "building the model raised AttributeError: 'str' object has no attribute '__module__'"


@pytest.mark.needs_bug("jit-error-replaces-exception")
def test_an_exception_replaced_by_torch_jit_error_is_a_bug_not_a_design():
    """Upstream tracks the loss as open (pytorch/pytorch#54612): the always_call hook still runs, and the
    caller catching torch.jit.Error instead of ValueError is jit-error-replaces-exception's departure."""
    scenario = next(s for s in SCENARIOS if s.model == "raising")
    compiled, plain = (
        run_scenario(scenario, style, "cpu", explains=explain) for style in ("script_method", "plain_forward")
    )
    assert plain.verdict == "match" and compiled.verdict == "differs" and compiled.scripted
    assert compiled.scripted.observation["hook calls"] == [["forward (always_call)"]]
    assert cause_of(compiled) == "jit-error-replaces-exception"


def test_a_childs_other_class_is_a_designed_difference_with_its_line():
    """A child of a subclass is a RecursiveScriptModule (torch.jit.script's documentation says submodules are
    compiled): listing children differs only in the class met, which the run names with its torch line."""
    scenario = next(s for s in SCENARIOS if s.api == "children")
    result = run_scenario(scenario, "script_method", "cpu", explains=explain)
    assert result.verdict == "refused" and result.scripted and result.eager
    assert result.scripted.observation["types"] == {"Linear": "RecursiveScriptModule"}
    assert result.eager.observation["types"] == {"Linear": "Linear"}
    path, line = result.detail.rsplit("(by design: ", 1)[1].rstrip(")").split(":")
    source = installed_torch_root() / path  # where the line is looked up (a patched torch may run elsewhere)
    assert "wrap_cpp_module" in source.read_text().splitlines()[int(line) - 1]


def _read(run):
    return [(r.scenario.key, r.style, r.instance, r.verdict, r.detail, r.scripted, r.eager) for r in run.results]


@pytest.mark.slow  # forks and runs every scenario (2 s)
@pytest.mark.parametrize("processes", [2, 3])
def test_a_run_shared_by_processes_reads_run_for_run_as_in_one(processes):
    default = [s for s in SCENARIOS if s.tier == "default"]
    assert _read(run_all("cpu", default, processes, explains=explain)) == _read(
        run_all("cpu", default, 1, explains=explain)
    )


def _tier_cases():
    from repro.catalogue import select

    table = select([], slow=True).scenarios
    quick = [s for s in table if s.tier == "default"]
    return [*quick, *(pytest.param(s, marks=pytest.mark.slow) for s in table if s.tier != "default")]


@pytest.fixture(scope="module")
def _library_types_compiled():
    """nn.Linear and nn.ReLU children are compiled once per process, by whichever run meets them first."""
    for shape in MODELS:
        for style in styles_of(shape):
            try:
                build_scripted(shape, style, "later", "cpu")
            except RuntimeError:  # a shape a bug keeps from building (init-hooks-break-plain-forward)
                pass


@pytest.mark.usefixtures("_library_types_compiled")
@pytest.mark.parametrize("scenario", _tier_cases(), ids=lambda s: s.key)
def test_each_run_compiles_its_models_own_classes_and_no_other(scenario):
    """A class shared between runs made a run's outcome depend on the runs before it (its optimized
    graph): each run compiles exactly the classes of its model, none fewer, and its body none."""
    compiled = []
    for style in styles_of(scenario.model):
        for instance in INSTANCES:
            with counted() as count:
                observe(partial(build_scripted, scenario.model, style, instance, "cpu"), scenario, "cpu")
            compiled.append(count.classes)
    assert compiled == [MODELS[scenario.model].classes] * len(compiled)


# data: the second bug's departure is also one TorchScript's design refuses
@pytest.mark.parametrize(
    "bug_id",
    [pytest.param(b, marks=pytest.mark.needs_bug(b)) for b in (A_BUG, "addition-refused-misleadingly")],
)
def test_a_judged_run_carries_the_cause_the_catalogue_reads_and_its_departure_stays_its_bugs(bug_id):
    """The oracle reads each run's cause once and stores it; the report and every format read it from
    there. The cause read must be the recognisers', and a departure a bug explains stays ``raises``
    (or ``differs``), never ``refused``, whatever TorchScript's design would also say of it."""
    from dataclasses import replace

    from repro.catalogue import BUGS

    bug = BUGS[bug_id]
    departure = bug.departures[0]
    scenario = next(s for s in SCENARIOS if s.key == departure.scenario)
    model = departure.model or next(shape for shape, style, _ in bug.scope if style == departure.style)
    result = run_scenario(replace(scenario, model=model), departure.style, "cpu", "first", explains=explain)
    assert result.cause_read and result.cause == cause_of(replace(result, cause_read=False)) == bug.id
    assert result.verdict == departure.verdict, result.detail


@pytest.mark.parametrize(
    ("error", "verdict", "refused_by"),
    [
        ("RuntimeError: the patch's words", "raises", "a-bug"),
        ("RuntimeError: register_forward_hook is not supported on ScriptModules", "refused", None),
    ],
    ids=["a patch's refusal", "torchscript's design"],
)
def test_a_judged_run_carries_the_patch_that_refused_it_unless_design_refused_it(error, verdict, refused_by):
    """The oracle stores the bug whose loud patch raised a run's refusal as the catalogue read it when it
    judged the run; the report reads it from there. A refusal TorchScript's design explains is nobody's."""
    from repro.catalogue import refused_by_patch
    from repro.engine.oracle import judged

    scenario = _scenario(needs=("register_forward_hook",))
    raised = Side({}, error)
    result = judged(scenario, "script_method", "later", raised, RAN, explains=lambda r: (None, "a-bug"))
    assert result.cause_read and result.verdict == verdict
    assert result.refused_by == refused_by_patch(result) == refused_by


class _Interrupted(torch.jit.ScriptModule):
    """Its compiled forward calls Python that receives a Ctrl-C, as a hook called from TorchScript can."""

    @torch.jit.ignore
    def python(self, x):  # unannotated: TorchScript takes Tensor (it cannot resolve a postponed one here)
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)  # the KeyboardInterrupt is raised here, inside TorchScript's call
        return x

    @torch.jit.script_method
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.python(x)


def test_a_ctrl_c_torchscript_turned_into_its_own_error_still_stops_the_run():
    """TorchScript raises the interrupt as a RuntimeError, which this body catches as scenarios that
    note what the caller catches do: the run must stop all the same, never record it and go on."""
    caught = []

    def body(m, rec):
        try:
            m(torch.ones(1))
        except Exception as err:
            caught.append(str(err))

    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        observe(_Interrupted, Scenario("forward", "synthetic", body, ("forward",)), "cpu")
    assert caught and "KeyboardInterrupt" in caught[0] and time.monotonic() - started < 5
