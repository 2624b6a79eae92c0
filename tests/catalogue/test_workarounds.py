"""Every catalogued bug's workaround, proven on the installed torch: its whole scope, run with the
workaround in force, matches eager; a bug without one still shows, and what was tried fails as said."""

from __future__ import annotations

import contextlib
import copy
import io
import warnings
from collections.abc import Callable
from typing import Any

import pytest
import torch

from helpers import A_BUG, copy_of_the_compiled_module, proof_of, proof_params, run
from repro import workaround
from repro.catalogue import BUGS
from repro.engine.models import build_scripted
from repro.vocabulary import WorkaroundVerdict

WITH = [bug_id for bug_id, bug in BUGS.items() if bug.workaround and bug.workaround.apply]
WITHOUT = [bug_id for bug_id, bug in BUGS.items() if bug.workaround and not bug.workaround.apply]


@pytest.mark.parametrize("bug_id", list(BUGS))
def test_each_bug_declares_a_workaround_or_none_with_what_was_tried(bug_id):
    found = BUGS[bug_id].workaround
    assert found is not None, f"{bug_id} declares no workaround, not even 'none'"
    assert found.summary and found.usage
    if found.apply is None:
        assert found.summary.startswith("none: ") and found.tried
    assert found.style in ("", "plain_forward", "script_method")


@pytest.mark.parametrize("bug_id", proof_params(WITH))
def test_each_workaround_makes_the_bugs_whole_scope_match_eager(bug_id):
    proof = proof_of(bug_id)
    assert proof.results and not proof.failures(), [(r.scenario.key, r.style, r.detail) for r in proof.failures()]
    assert proof.works and proof.verdict == WorkaroundVerdict.HOLDS  # never silently wrong where recommended
    assert [(r.scenario.key, r.style) for r, cause in proof.elsewhere() if cause == bug_id] == []
    workaround = BUGS[bug_id].workaround
    assert workaround
    declared = set(workaround.limits)  # a limit is measured, never an excuse: each one departs
    assert {(r.scenario.model, r.style) for r in proof.limited()} == declared
    assert not declared or workaround.limits_why


@pytest.mark.needs_bug(A_BUG)
@pytest.mark.parametrize("bug_id", proof_params(WITHOUT))
def test_a_bug_without_a_workaround_still_shows_in_its_whole_scope(bug_id):
    """'none' is measured: nothing in force, every departure of the scope is the bug's own."""
    proof = proof_of(bug_id)
    assert proof.failures() and not proof.works


def _flat(style: str = "script_method") -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build_scripted("flat", style, "later", "cpu")


def _none_through_the_wrapper(model: Any) -> str:
    object.__setattr__(model, "weight", None)
    kept = "weight" in model.state_dict() and model(torch.ones(1, 2)) is not None
    return f"wrapper reads {model.weight}; state_dict keeps it: {kept}"


def _delete_the_parameter(model: Any) -> str:
    del model.weight
    return "deleted"


def _none_in_parameters(model: Any) -> str:
    model._parameters["weight"] = None
    return "assigned"


def _delete_through_the_inner_module(model: Any) -> str:
    model.label = "set after __init__"
    delattr(model._actual_script_module, "label")
    return f"deleted: {not hasattr(model, 'label')}"


def _copy_copy(model: Any) -> str:
    clone = copy.copy(model)
    return f"same class: {type(clone) is type(model)}; shares weight: {clone.weight is model.weight}"


def _child(style: str = "script_method") -> Any:
    return _built("child", style)


def _built(shape: str, style: str, instance: str = "later") -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build_scripted(shape, style, instance, "cpu")


def _new_parameter_by_assignment(model: Any) -> str:
    model.extra = torch.nn.Parameter(torch.ones(1))
    return "added"


def _new_child_by_assignment(model: Any) -> str:
    model.extra = torch.nn.Identity()
    return "added"


def _buffer_on_a_child(model: Any) -> str:
    _child().linear.register_buffer("extra", torch.ones(1))
    return "added"


def _catch_the_own_class(model: Any) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raising = build_scripted("raising", "script_method", "later", "cpu")
    try:
        raising(torch.full((2, 2), -100.0))
    except ValueError:
        return "caught ValueError"
    except Exception as err:
        return f"the caller gets {type(err).__name__}"
    return "nothing raised"


def _deepcopy_for_training(model: Any) -> str:
    clone = copy.deepcopy(model)
    clone.eval()
    return f"original training: {model.training}; copy: {type(clone).__name__}"


def _counting_backend(graphs: list) -> Callable[..., Any]:
    def backend(graph_module: Any, inputs: Any) -> Any:  # dynamo calls it once per graph it compiles
        graphs.append(graph_module)
        return graph_module.forward

    return backend


def _compile_on_the_wrapper(model: Any) -> str:
    """What Module.compile would do, with the compiled call stored where the wrapper's ``__call__`` reads it."""
    import torch._dynamo

    graphs: list = []
    torch._dynamo.reset()  # nothing another test compiled may serve this call
    object.__setattr__(model, "_compiled_call_impl", torch.compile(model._call_impl, backend=_counting_backend(graphs)))
    model(torch.ones(1, 2))
    torch._dynamo.reset()
    return f"{len(graphs)} graphs"


def _torch_compile_a_script_method(model: Any) -> str:
    graphs: list = []
    torch.compile(model, backend=_counting_backend(graphs))(torch.ones(1, 2))
    return f"{len(graphs)} graphs"


def _torch_compile_the_forward(model: Any) -> str:
    graphs: list = []
    torch.compile(model.forward, backend=_counting_backend(graphs))(torch.ones(1, 2))
    return f"{len(graphs)} graphs"


def _script_then_save(model: Any) -> str:
    plain = _built("flat", "plain_forward")
    buffer = io.BytesIO()
    torch.jit.save(torch.jit.script(plain), buffer)
    buffer.seek(0)
    return (
        f"same model: {torch.jit.script(plain) is plain}; loaded forward: {hasattr(torch.jit.load(buffer), 'forward')}"
    )


def _hook_compiled_after_construction(model: Any) -> str:
    """The hook compiled onto the model's class (a later instance's: its class was compiled before)."""
    from torch.jit._recursive import create_hooks_from_stubs, make_stub

    from repro.engine.models import double_output

    create_hooks_from_stubs(model._concrete_type, [make_stub(double_output, "double_output")], [])
    buffer = io.BytesIO()
    torch.jit.save(model, buffer)
    buffer.seek(0)
    saved = [hook.name for hook in torch.jit.load(buffer)._c._get_forward_hooks()]
    return f"saved: {saved}; a new instance's: {[hook.name for hook in type(model)()._c._get_forward_hooks()]}"


def _quantize_in_place(model: Any) -> str:
    try:
        torch.ao.quantization.quantize_dynamic(_child(), {torch.nn.Linear}, dtype=torch.qint8, inplace=True)
    except AttributeError as err:
        return f"AttributeError: {err}"
    return "quantized"


def _unoptimized_execution(model: Any) -> str:
    between, x = _built("child between", "script_method", "first"), torch.ones(2, 2, requires_grad=True)
    between(x)
    between(x)  # optimized now
    with torch.jit.optimized_execution(False), torch.no_grad():
        return f"requires grad: {between(x).requires_grad}"


def _strict_export(model: Any) -> str:
    try:
        torch.export.export(_built("scripted child", "torch.jit.script"), (torch.ones(2, 2),), strict=True)
    except Exception as err:  # dynamo's Unsupported: the refusal is the observation
        return str(err).splitlines()[0]
    return "exported"


def _early_stop_off_alone(model: Any) -> str:
    from torch.utils.checkpoint import checkpoint, set_checkpoint_early_stop

    fresh = _built("child first", "script_method", "first")
    try:
        with set_checkpoint_early_stop(False):
            checkpoint(fresh, torch.ones(2, 2, requires_grad=True), use_reentrant=False).sum().backward()
    except RuntimeError as err:
        return str(err).splitlines()[0]
    return "no error"


JIT_AUTOCAST_OFF_IN_TRAINING = """
import torch, warnings
warnings.simplefilter("ignore")
from repro.engine.models import build_scripted
torch._C._jit_set_autocast_mode(False)  # as the workaround said: once, before the model runs
model = build_scripted("child first", "script_method", "first", "cpu")
try:
    for _ in range(2):  # a first call, then one through the optimized graph
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out = model(torch.ones(2, 2, requires_grad=True))
        out.sum().backward()
    print("trained")
except RuntimeError as err:
    print(str(err).strip().splitlines()[-1])
"""


def _jit_autocast_off_in_training(model: Any) -> str:
    """In a fresh process, as users set the switch: once a child's compiled forward was optimized with
    JIT autocast on (an earlier model trained in this process), later ones train (measured)."""
    proc = run(["-c", JIT_AUTOCAST_OFF_IN_TRAINING])
    return proc.stdout.strip() or proc.stderr.strip()[-300:]


def _copy_of_the_compiled_module(model: Any) -> str:
    clone = copy_of_the_compiled_module(model)
    clone.weight = torch.nn.Parameter(torch.zeros(2, 2))
    return f"the original holds the copy's new weight: {model.weight is clone.weight}"


class Tied(torch.nn.Module):
    """Two layers sharing one weight: what a copy must keep shared."""

    def __init__(self) -> None:
        super().__init__()
        self.a, self.b = torch.nn.Linear(2, 2), torch.nn.Linear(2, 2)
        self.b.weight = self.a.weight

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(self.a(x))


def _leaves_by_setattr(model: Any) -> str:
    clone = copy.deepcopy(torch.jit.script(Tied()))
    for name, param in list(clone.named_parameters(remove_duplicate=False)):
        owner, _, leaf = name.rpartition(".")
        setattr(getattr(clone, owner), leaf, torch.nn.Parameter(param.detach()))
    return f"leaves: {clone.a.weight.is_leaf}; still shared: {clone.a.weight is clone.b.weight}"


def _named_again_then_copied(model: Any) -> str:
    model = build_scripted("non-persistent buffer child", "script_method", "later", "cpu")
    model.scaling._non_persistent_buffers_set.add("scale")
    return f"state_dict: {sorted(model.state_dict())}; its deep copy's: {sorted(copy.deepcopy(model).state_dict())}"


# Each line of a bug's `tried` (named by how it starts), done on a model of its scope: (bug, the
# alternative, what it shows on this torch).
TRIED: dict[str, tuple[str, Callable[[Any], str], str]] = {
    "object.__setattr__(model, 'weight', None)": (
        "attribute-assignment-forwarded",
        _none_through_the_wrapper,
        "wrapper reads None; state_dict keeps it: True",
    ),
    "del model.weight": (
        "attribute-assignment-forwarded",
        _delete_the_parameter,
        "cannot delete methods or parameters",
    ),
    "model._parameters['weight'] = None": (
        "attribute-assignment-forwarded",
        _none_in_parameters,
        "strides() called on an undefined Tensor",
    ),
    "delattr(model._actual_script_module, name)": (
        "attribute-assignment-forwarded",
        _delete_through_the_inner_module,
        "deleted: True",
    ),
    "copy.copy": ("deepcopy-drops-subclass", _copy_copy, "same class: True; shares weight: True"),
    "object.__setattr__(model, '_compiled_call_impl'": ("module-compile-noop", _compile_on_the_wrapper, "0 graphs"),
    "torch.compile(model) on a script_method": ("module-compile-noop", _torch_compile_a_script_method, "0 graphs"),
    "except ValueError around a script_method forward": (
        "jit-error-replaces-exception",
        _catch_the_own_class,
        "the caller gets Error",
    ),
    "setattr of a new nn.Parameter": (
        "addition-refused-misleadingly",
        _new_parameter_by_assignment,
        "Can't add a new parameter after ScriptModule construction",
    ),
    "setattr of a new eager child": (
        "addition-refused-misleadingly",
        _new_child_by_assignment,
        "tried to replace existing module 'extra'",
    ),
    "register_buffer on a child (m.linear)": (
        "addition-refused-misleadingly",
        _buffer_on_a_child,
        "Can't add a new parameter after ScriptModule construction",
    ),
    "torch.compile(model.forward)": ("compile-subclass-silent", _torch_compile_the_forward, "0 graphs"),
    "torch.jit.script(model) before saving": (
        "jit-save-drops-plain-forward",
        _script_then_save,
        "same model: True; loaded forward: False",
    ),
    "compiling the hook after construction": (
        "jit-save-drops-subclass-hooks",
        _hook_compiled_after_construction,
        "saved: ['double_output']; a new instance's: ['double_output']",
    ),
    "quantize_dynamic(..., inplace=True)": ("quantize-dynamic-skips-subclass", _quantize_in_place, "qconfig"),
    "torch.jit.optimized_execution(False)": (
        "optimized-graph-ignores-grad-mode",
        _unoptimized_execution,
        "requires grad: True",
    ),
    "torch.export.export(..., strict=True)": (
        "export-scripted-child-crashes",
        _strict_export,
        "torch.jit.script/freeze modules unsupported",
    ),
    "set_checkpoint_early_stop(False) alone": (
        "checkpoint-early-stop",
        _early_stop_off_alone,
        "The following operation failed in the TorchScript interpreter",
    ),
    "torch._C._jit_set_autocast_mode(False)": (
        "autocast-compiled-float32",
        _jit_autocast_off_in_training,
        "expected m1 and m2 to have the same dtype",
    ),
    "copying the compiled module shallowly": (
        "copy-shares-training",
        _copy_of_the_compiled_module,
        "the original holds the copy's new weight: False",
    ),
    "replacing each parameter of the copy": (
        "deepcopy-parameters-not-leaves",
        _leaves_by_setattr,
        "leaves: True; still shared: False",
    ),
    "naming the buffer again on the compiled child": (
        "nonpersistent-buffers-in-state-dict",
        _named_again_then_copied,
        "state_dict: ['linear.bias', 'linear.weight', 'steps']; its deep copy's: ['linear.bias', "
        "'linear.weight', 'scaling.scale', 'steps']",
    ),
    "copy.deepcopy: keeps its own training mode": (
        "copy-shares-training",
        _deepcopy_for_training,
        "original training: True; copy: RecursiveScriptModule",
    ),
}


# what a tried attempt shows through another bug too: gone where that bug is
SHOWS_ALSO = {
    "copy.deepcopy: keeps its own training mode": ("deepcopy-drops-subclass",),
    "quantize_dynamic(..., inplace=True)": ("attribute-assignment-forwarded",),  # its qconfig is forwarded
    "torch.compile(model) on a script_method": ("compile-subclass-silent",),  # whose patch refuses it
}


SLOW_TRIED = ("torch._C._jit_set_autocast_mode(False)",)  # trains under autocast: 2 s


def _tried(start: str) -> Any:
    marks = [pytest.mark.needs_bug(TRIED[start][0], *SHOWS_ALSO.get(start, ()))]
    return pytest.param(start, marks=[*marks, pytest.mark.slow] if start in SLOW_TRIED else marks)


@pytest.mark.parametrize("start", [_tried(s) for s in TRIED])
def test_what_each_bug_says_was_tried_does_what_it_says(start):
    bug_id, attempt, shows = TRIED[start]
    try:
        seen = attempt(_flat())
    except RuntimeError as err:
        seen = str(err).splitlines()[0]
    assert shows in seen


def test_every_alternative_a_bug_names_is_measured_here():
    """Each line of a ``tried`` has its row in TRIED, but full-backward-hook-flag's, which ``python -m
    repro --candidates`` measures (``jit-ignored-attributes``: tests/filing/test_filing.py)."""
    named = [
        (bug_id, line) for bug_id, bug in BUGS.items() for line in (bug.workaround.tried if bug.workaround else ())
    ]
    rows = sorted((bug_id, start) for start, (bug_id, _, _) in TRIED.items())
    matched = sorted((bug_id, start) for bug_id, line in named for start in TRIED if line.startswith(start))
    assert matched == rows
    assert {bug_id for bug_id, line in named if not any(line.startswith(start) for start in TRIED)} == {
        "full-backward-hook-flag"
    }


@pytest.mark.needs_bug("global-backward-hooks-scripted")  # what it undoes is that bug's refusal
def test_allow_global_backward_hooks_is_undone_by_remove():
    scripted = torch.jit.script(torch.nn.Linear(2, 2))
    with workaround.allow_global_backward_hooks():
        assert scripted._get_backward_hooks() == ([], [])
    with pytest.raises(RuntimeError, match="_get_backward_hooks is not supported on ScriptModules"):
        scripted._get_backward_hooks()


def test_deepcopy_keeps_the_class_hooks_and_an_independent_copy():
    model, calls = _flat("plain_forward"), []
    model.register_forward_hook(lambda module, args, output: calls.append(module))
    clone = workaround.deepcopy(model)
    clone(torch.ones(1, 2))
    assert type(clone) is type(model) and calls == [clone]
    assert clone.weight is not model.weight and torch.equal(clone.weight, model.weight)  # type: ignore[arg-type]
    eager = torch.nn.Linear(2, 2)
    assert type(workaround.deepcopy(eager)) is torch.nn.Linear


def test_deepcopy_keeps_a_subclass_child_with_its_hooks():
    model, calls = build_scripted("subclass child", "plain_forward", "later", "cpu"), []
    inner: Any = model.inner
    inner.register_forward_hook(lambda module, args, output: calls.append(module))
    clone = workaround.deepcopy(model)
    clone(torch.ones(1, 2)).sum().backward()
    assert type(clone.inner) is type(model.inner) and calls == [clone.inner]
    assert all(p.is_leaf and p.grad is not None for p in clone.parameters())
    assert all(p.grad is None for p in model.parameters())


@pytest.mark.parametrize("route", [False, True], ids=["called", "routed"])
def test_deepcopy_of_a_scripted_module_has_parameters_of_its_own_and_keeps_shared_ones_shared(route):
    """Each of the copy's parameters is an ``nn.Parameter`` leaf of its own, frozen where the original's
    is, as eager's copy makes them (the C++ copy makes plain tensors: ``torch.export`` refuses them)."""
    tied = Tied()
    tied.b.bias.requires_grad_(False)
    model, standard = torch.jit.script(tied), copy.deepcopy
    with workaround.routed("copy.deepcopy") if route else contextlib.nullcontext():
        clone = copy.deepcopy(model) if route else workaround.deepcopy(model)
        assert copy.deepcopy({"a": 1}) == {"a": 1}  # what is not a module is copied as ever
    assert type(clone) is type(model) and clone.a.weight is clone.b.weight
    copied = dict(clone.named_parameters())
    assert {name: (type(p), p.requires_grad) for name, p in copied.items()} == {
        name: (type(p), p.requires_grad) for name, p in copy.deepcopy(tied).named_parameters()
    }
    clone(torch.ones(1, 2)).sum().backward()
    assert all(p.is_leaf and (p.grad is not None) == p.requires_grad for p in copied.values())
    assert all(p.grad is None for p in model.parameters())
    assert copy.deepcopy is standard  # the route is undone


@pytest.mark.slow  # torch.export traces the model (seconds)
def test_deepcopy_of_an_eager_model_holding_a_scripted_child_exports():
    """``torch.export`` refuses a state dict entry of a parameter that is not an ``nn.Parameter``: what
    the explorer met after the workaround's copy (deepcopy-drops-subclass, torch 2.13.0)."""
    clone = workaround.deepcopy(torch.nn.Sequential(torch.jit.script(Tied())))
    exported = torch.export.export(clone, (torch.ones(1, 2),))
    assert torch.equal(exported.module()(torch.ones(1, 2)), clone(torch.ones(1, 2)))


@pytest.mark.parametrize("bug_id", WITH)
def test_each_workaround_is_also_said_in_torchs_terms_for_an_issue_body(bug_id):
    """An upstream reader has no ``repro.workaround``: the issue body says what it does with torch's names."""
    found = BUGS[bug_id].workaround
    assert found is not None and found.in_torch_terms and "repro" not in found.in_torch_terms


@pytest.mark.needs_bug("global-backward-hooks-scripted")
@pytest.mark.parametrize("order", [(0, 1), (1, 0)], ids=["first made first undone", "last made first undone"])
def test_allow_global_backward_hooks_twice_is_undone_by_the_last_remove_in_either_order(order):
    scripted = torch.jit.script(torch.nn.Linear(2, 2))
    handles = [workaround.allow_global_backward_hooks(), workaround.allow_global_backward_hooks()]
    handles[order[0]].remove()
    assert scripted._get_backward_hooks() == ([], [])  # one is still in force
    handles[order[0]].remove()  # a second remove of the same one changes nothing
    assert scripted._get_backward_hooks() == ([], [])
    handles[order[1]].remove()
    with pytest.raises(RuntimeError, match="_get_backward_hooks is not supported on ScriptModules"):
        scripted._get_backward_hooks()


COPIED_WITHOUT_TORCHSCRIPT = """
import copy
import torch
from repro import workaround

class Net(torch.jit.ScriptModule):  # an nn.Module: PYTORCH_JIT=0
    __copy__ = workaround.shallow_copy
    __deepcopy__ = workaround.deepcopy

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(2, 2)

    def forward(self, x):
        return self.linear(x)

model = Net()
shallow, deep = copy.copy(model), copy.deepcopy(model)
print(type(shallow).__name__, shallow.linear is model.linear, type(deep).__name__, deep.linear is model.linear)
"""


@pytest.mark.slow  # a fresh interpreter that imports torch
def test_the_copy_functions_as_a_class_s_copy_methods_work_without_torchscript():
    """Under ``PYTORCH_JIT=0`` ``ScriptModule`` is an ``nn.Module``: what docs/downstream.md recommends
    recursed until ``RecursionError`` there."""
    proc = run(["-c", COPIED_WITHOUT_TORCHSCRIPT], env={"PYTORCH_JIT": "0"})
    assert proc.returncode == 0, proc.stderr[-1500:]
    assert proc.stdout.split() == ["Net", "True", "Net", "False"]
