"""Scenario results and reports built by hand, as the oracle and the report would record them: what the
tests of the catalogue, the report, the support table and the issue body feed the code under test."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from repro.catalogue import BUGS, cause_of, select
from repro.engine.models import styles_of
from repro.engine.oracle import OracleRun, ScenarioResult, Side
from repro.engine.scenarios import SCENARIOS, Scenario
from repro.environment import Environment
from repro.ledger import Expectation
from repro.report import Report, build_report
from repro.vocabulary import Verdict

ITSELF = "<the module itself>"
SCENARIO = {s.key: s for s in SCENARIOS}
CHILD = "<another module: Linear>"


def result(
    key: str | Scenario, style: str, verdict: str, detail: str = "", scripted: Iterable = (), eager: Iterable = ()
) -> ScenarioResult:
    """One scenario run (a scenario or its key) as the oracle records it: its verdict and each twin's hook calls."""
    return ScenarioResult(
        key if isinstance(key, Scenario) else SCENARIO[key],
        style,
        Verdict(verdict),
        detail,
        Side({"hook calls": list(scripted)}, detail if verdict == "raises" else None),
        Side({"hook calls": list(eager)}, None),
    )


# One measured departure per bug (torch 2.13.0, CPU), as the oracle records it.
DEPARTURES = {
    "full-backward-hook-flag": result(
        "register_full_backward_hook: called with grad_input and grad_output",
        "plain_forward",
        "raises",
        "RuntimeError: Could not cast attribute '_is_full_backward_hook' to type NoneType: Cannot cast True to None",
    ),
    "full-backward-hook-flag (silenced)": result(
        "register_full_backward_hook: called with grad_input and grad_output",
        "script_method",
        "differs",
        "hook calls: ScriptModule [] vs eager ['backward']",
        eager=[["backward", ITSELF]],
    ),
    "global-backward-hooks-scripted": result(
        "register_module_full_backward_hook: runs for the model and its child",
        "plain_forward",
        "raises",
        "RuntimeError: _get_backward_hooks is not supported on ScriptModules",
    ),
    "global-hooks-root-only": result(
        "register_module_forward_hook: runs for the model and its child",
        "script_method",
        "differs",
        "hook calls",
        scripted=[["global forward", ITSELF]],
        eager=[["global forward", CHILD], ["global forward", ITSELF]],
    ),
    "module-compile-noop": result(
        "compile: later calls go through torch.compile",
        "script_method",
        "differs",
        "hook calls",
        eager=[["torch.compile backend"]],
    ),
    "deepcopy-drops-subclass": result(
        "copy.deepcopy: keeps the class and the hooks; the copy runs",
        "plain_forward",
        "raises",
        "AttributeError: 'RecursiveScriptModule' object has no attribute 'forward'",
    ),
    "attribute-assignment-forwarded": result(
        "setattr: assigns a parameter to None",
        "script_method",
        "raises",
        "RuntimeError: Could not cast attribute 'weight' to type Tensor: strides() called on an undefined Tensor",
    ),
    "child-hooks-bypassed": result(
        "register_forward_hook: on a child that is itself a ScriptModule subclass",
        "script_method",
        "differs",
        "hook calls",
        eager=[["child forward"]],
    ),
    "checkpoint-early-stop": result(
        "torch.utils.checkpoint.checkpoint: non-reentrant, with early stop: same gradients",
        "script_method",
        "raises",
        "RuntimeError: The following operation failed in the TorchScript interpreter.",
    ),
    "jit-error-replaces-exception": replace(
        result(
            "register_forward_hook: always_call: the forward itself raises; the caller catches",
            "script_method",
            "differs",
        ),
        scripted=Side({"hook calls": [["forward (always_call)"]], "the caller catches": "Error"}, None),
        eager=Side({"hook calls": [["forward (always_call)"]], "the caller catches": "ValueError"}, None),
    ),
    "addition-refused-misleadingly": result(
        "register_buffer: adds a buffer after __init__",
        "plain_forward",
        "raises",
        "AttributeError: cannot assign buffer before Module.__init__() call",
    ),
    "copy-shares-training": replace(
        result("copy.copy: eval() on the copy leaves the original in training mode", "script_method", "differs"),
        scripted=Side({"hook calls": [], "original training": False, "copy training": False}, None),
        eager=Side({"hook calls": [], "original training": True, "copy training": False}, None),
    ),
    "compile-subclass-silent": replace(
        result(
            "torch.compile: a counting backend captures the forward; outputs and hooks as eager",
            "script_method",
            "differs",
        ),
        scripted=Side({"hook calls": [], "graphs captured": 0}, None),
        eager=Side({"hook calls": [], "graphs captured": 1}, None),
    ),
    "jit-save-drops-plain-forward": result(
        "torch.jit.save: round-trips through torch.jit.save and torch.jit.load: outputs, parameters, training flag",
        "plain_forward",
        "raises",
        "AttributeError: 'RecursiveScriptModule' object has no attribute 'forward'",
    ),
    "quantize-dynamic-skips-subclass": replace(
        result(
            "torch.ao.quantization.quantize_dynamic: dynamic int8 quantization of the linear layers",
            "script_method",
            "differs",
        ),
        scripted=Side({"hook calls": [], "first call: its child quantized": False}, None),
        eager=Side({"hook calls": [], "first call: its child quantized": True}, None),
    ),
    "optimized-graph-ignores-grad-mode": replace(
        result("torch.no_grad: no graph recorded; hooks run", "script_method", "differs"),
        scenario=SCENARIO["torch.no_grad: no graph recorded; hooks run"].on("child between"),
        scripted=Side({"hook calls": [], "first call: output": {"requires_grad": True}}, None),
        eager=Side({"hook calls": [], "first call: output": {"requires_grad": False}}, None),
    ),
    "optimized-graph-ignores-grad-mode (vmap)": replace(
        result(
            "torch.func.vmap: maps the model over a batch dimension",
            "script_method",
            "raises",
            "RuntimeError: The following operation failed in the TorchScript interpreter.",
        ),
        scenario=SCENARIO["torch.func.vmap: maps the model over a batch dimension"].on("child between"),
    ),
    "init-hooks-break-plain-forward": result(
        "register_forward_hook: a forward hook and pre-hook registered in __init__ change every call's output",
        "plain_forward",
        "raises",
        "building the model raised RuntimeError: Couldn't find method: 'forward' on class: 'HookedBeforeChildren'",
    ),
    "autocast-compiled-float32": replace(
        result("torch.autocast: autocast to bfloat16 on CPU: output dtype and values", "script_method", "differs"),
        scenario=SCENARIO["torch.autocast: autocast to bfloat16 on CPU: output dtype and values"].on("child first"),
        scripted=Side({"hook calls": [], "first call: output": {"dtype": "torch.float32"}}, None),
        eager=Side({"hook calls": [], "first call: output": {"dtype": "torch.bfloat16"}}, None),
    ),
    "export-scripted-child-crashes": replace(
        result(
            "torch.export.export: exports the forward; the exported program computes the same output",
            "torch.jit.script",
            "raises",
            "TypeError: Flat.forward() takes 2 positional arguments but 3 were given",
        ),
        scenario=SCENARIO["torch.export.export: exports the forward; the exported program computes the same output"].on(
            "scripted child"
        ),
    ),
}


ENV = Environment("2.13.0", "3.11", "cpu", "not installed")


def expectations(outcome: str = "present", **per_bug: str) -> dict[str, Expectation]:
    """The ledger's expectation for every bug: ``outcome``, or per bug (its id with ``_`` for ``-``)."""
    return {bug_id: Expectation(per_bug.get(bug_id.replace("-", "_"), outcome), "test") for bug_id in BUGS}


def report_of(
    results: list[ScenarioResult],
    expected: dict[str, Expectation] | None = None,
    cannot_test: str | None = None,
    skipped: dict[str, str] | None = None,
) -> Report:
    """The report of a run on ``ENV`` that recorded ``results``, against ``expected`` (every bug present)."""
    return build_report(ENV, OracleRun(results, [], cannot_test), expected or expectations(), skipped)


LOUD_BUGS = [bug.id for bug in BUGS.values() if bug.fixes.patch.refusal]  # those whose upstream patch refuses


def unclaimed(bug_id: str, verdict: str, detail: str, in_scope: bool = True) -> ScenarioResult:
    """A run in ``bug_id``'s scope (or, ``in_scope=False``, outside it) that no bug's recogniser claims."""
    pool = select([bug_id], slow=True).scenarios if in_scope else SCENARIOS  # the bug's, on every shape of it
    runs = (result(s, style, verdict, detail) for s in pool for style in styles_of(s.model))
    return next(r for r in runs if BUGS[bug_id].covers(r) == in_scope and cause_of(r) is None)


def refusal(bug_id: str, in_scope: bool = True) -> ScenarioResult:
    """A run raising ``bug_id``'s loud upstream patch's refusal, as on a torch that merged that patch."""
    detail = f"RuntimeError: this model: {BUGS[bug_id].fixes.patch.refusal} (the patch's words, mid-sentence)"
    return unclaimed(bug_id, "raises", detail, in_scope)
