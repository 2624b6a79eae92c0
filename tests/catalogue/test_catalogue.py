"""The catalogue: each bug recognised by its own departure only, statuses per bug, scripts that run."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest
import torch
from results import DEPARTURES, result

from helpers import ROOT, first_quick, run, run_here
from repro.catalogue import BUGS, UnknownBug, across_scope, cause_of, get, select
from repro.engine.by_design import BY_DESIGN, CPP, refusal_line
from repro.engine.scenarios import SCENARIOS
from repro.source_checks import installed_sources, installed_torch_root


@pytest.mark.parametrize("name", list(DEPARTURES))
def test_each_departure_is_recognised_by_its_own_bug_only(name):
    departure = DEPARTURES[name]
    recognising = {bug.id for bug in BUGS.values() if bug.recognise(departure)}
    assert recognising == {name.split(" ")[0]}  # every other recogniser rejects it: no catch-all
    assert cause_of(departure) == name.split(" ")[0]


def test_an_unknown_departure_is_explained_by_no_bug():
    odd = result(
        "register_forward_hook: prepend=True runs before earlier hooks",
        "script_method",
        "differs",
        "hook calls: ScriptModule ['prepended', 'first registered'] vs eager [...]",
        scripted=[["prepended"], ["first registered"]],
        eager=[["first registered"], ["prepended"]],
    )
    assert cause_of(odd) is None
    assert [bug.id for bug in BUGS.values() if bug.recognise(odd)] == []


def test_the_catalogue_holds_the_known_bugs_with_their_scripts():
    assert set(BUGS) >= {"full-backward-hook-flag", "global-backward-hooks-scripted", "module-compile-noop"}
    for bug in BUGS.values():
        code = [line for line in bug.paste.splitlines() if line.strip()]  # minimal: blank lines are layout
        assert len(code) <= 25 and "sys.exit" not in bug.paste
        assert re.fullmatch(
            r"pytorch/pytorch#\d+|not reported yet( \(related: pytorch/pytorch#\d+(, #\d+)*\))?", bug.upstream
        )


def test_each_bug_scopes_styles_and_shapes_the_engine_runs():
    """A scope naming a shape or style no scenario runs in would leave the bug silently untested."""
    from repro.catalogue.bug import SUBCLASS_SHAPES
    from repro.engine.models import MODELS, ONLY_WHEN_REQUIRED, SCRIPTED, STYLES, styles_of

    subclasses = {shape for shape in MODELS if styles_of(shape) == STYLES}
    assert set(SUBCLASS_SHAPES) == {shape for shape in subclasses if not ONLY_WHEN_REQUIRED & MODELS[shape].traits}
    for bug in BUGS.values():
        runs = {
            (style, shape)
            for s in SCENARIOS
            if s.apis & set(bug.apis)
            for shape in s.shapes
            for style in styles_of(shape)
        }
        assert set(bug.styles) <= {*STYLES, SCRIPTED} and set(bug.models) <= set(MODELS)
        assert runs & {(style, shape) for style in bug.styles for shape in bug.models}, bug.id


def test_an_unknown_id_is_one_sentence():
    with pytest.raises(UnknownBug) as caught:
        get("no-such-bug")
    assert str(caught.value) == "unknown bug id 'no-such-bug' (--list-bugs lists them)"
    with pytest.raises(UnknownBug) as caught:
        get("deepcopy-drop")
    assert str(caught.value) == "unknown bug id 'deepcopy-drop'; did you mean 'deepcopy-drops-subclass'?"
    with pytest.raises(UnknownBug) as caught:  # both ids long: the sentence leaves out the one typed
        get("optimized-graph-ignores-grad-mod")
    assert str(caught.value) == "unknown bug id; did you mean 'optimized-graph-ignores-grad-mode'?"


def test_the_default_run_leaves_out_only_what_is_not_default_and_says_why():
    default = select([], slow=False)
    assert {s.tier for s in default.scenarios} == {"default"}
    table = [*SCENARIOS, *across_scope(list(BUGS.values()))]  # each scenario, and bugs' scopes on other shapes
    assert default.scenarios + default.not_run == [s for s in table if s in default.scenarios] + [
        s for s in table if s not in default.scenarios
    ]
    assert {s.tier for s in default.not_run} == {"variant", "slow"}
    slow = {"module-compile-noop", "checkpoint-early-stop", "compile-subclass-silent", "export-scripted-child-crashes"}
    variant = {
        "jit-save-drops-plain-forward",
        "quantize-dynamic-skips-subclass",
        "optimized-graph-ignores-grad-mode",
        "init-hooks-break-plain-forward",
        "autocast-compiled-float32",
        "deepcopy-parameters-not-leaves",  # its one scenario is deepcopy-drops-subclass's variant
        "jit-save-drops-subclass-hooks",
    }  # the other APIs of the handed-on and lifecycle areas
    assert set(default.skipped) == slow | variant
    for bug_id, why in default.skipped.items():
        tier = "slow (compiling, exporting, DDP" if bug_id in slow else "variant (ordering"
        assert why.startswith(f"its scenarios are {tier}"), why
        assert why.endswith(f"left out of the default run: --slow or --bug {bug_id} runs them")
    everything = select([], slow=True)
    assert everything.scenarios == table and everything.not_run == [] and everything.skipped == {}


def test_a_bug_asked_for_runs_all_its_scenarios_and_nothing_else():
    only = select(["module-compile-noop"], slow=False)
    assert {s.api for s in only.scenarios} == {"compile"} and only.not_run == []
    assert set(only.skipped) == set(BUGS) - {"module-compile-noop"}
    flag = select(["full-backward-hook-flag"], slow=False)
    assert {s.tier for s in flag.scenarios} == {"default", "variant"}


def test_an_issue_body_runs_its_bugs_whole_scope_beside_the_default_tier():
    plain = select([], False)
    for bug_id in ("full-backward-hook-flag", "module-compile-noop"):
        body = select([], False, also=(bug_id,))
        table = [*SCENARIOS, *across_scope(list(BUGS.values()))]
        scope = [s for s in table if s.apis & set(BUGS[bug_id].apis)]
        assert set(body.scenarios) == set(plain.scenarios) | set(scope) and not set(scope) & set(body.not_run)
    assert "module-compile-noop" not in select([], False, also=("module-compile-noop",)).skipped


@pytest.mark.parametrize("bug_id", list(BUGS))
def test_static_signature_is_present_on_the_installed_torch(bug_id):
    if bug_id == "full-backward-hook-flag" and not torch.__version__.startswith("2.13"):
        pytest.skip("the evidence lines below were read on 2.13")
    verdict = BUGS[bug_id].static(installed_sources())
    if not BUGS[bug_id].pieces:  # decided outside the probed files: confirmed dynamically, never by its absence
        assert verdict.verdict == "unknown" and verdict.evidence == [f"no static signature: {BUGS[bug_id].no_static}"]
        return
    assert verdict.verdict == "present"
    assert [line for line in verdict.evidence if ":" not in line] == []


def test_static_signature_is_not_applicable_without_the_api():
    sources = installed_sources()
    without = {
        **sources,
        "torch/nn/modules/module.py": str(sources["torch/nn/modules/module.py"]).replace(
            "def compile(self", "def compile_removed(self"
        ),
    }
    verdict = BUGS["module-compile-noop"].static(without)
    assert verdict.verdict == "not-applicable" and "Module.compile not found" in verdict.evidence[0]


def test_by_design_refusals_cite_the_line_that_raises():
    """The ``raise`` statement whose message holds the refusal's text (on its line or the next ones)."""
    for entry in (e for e in BY_DESIGN if e.source != CPP):
        path, line = refusal_line(entry).split(":")
        lines = (installed_torch_root() / path).read_text().splitlines()[int(line) - 1 : int(line) + 3]
        assert "raise" in lines[0], (entry.error, lines)
        assert any(entry.error in text for text in lines), (entry.error, lines)
    cpp = next(e for e in BY_DESIGN if e.source == CPP)
    assert refusal_line(cpp) == "torch._C, raised in C++"


@pytest.mark.parametrize("bug_id", first_quick(pytest.param(b, marks=pytest.mark.needs_bug(b)) for b in BUGS))
def test_each_bisect_script_exits_1_while_the_bug_is_present(bug_id):
    """Run here, where torch is imported; the paste-ready scripts run in fresh interpreters in
    tests/filing/test_filing.py, where the issue body shows their output."""
    code, out = run_here("repro.bisect", bug_id)
    assert code == 1 and "BUG:" in out, out


class Eager(torch.nn.Module):
    """What a torch that fixed every bug would look like from outside: ScriptModule behaving as nn.Module."""

    def __init__(self):
        super().__init__()
        self._actual_script_module = None


def _deepcopy_to_leaves(self: Any, memo: dict[int, Any]) -> Any:
    """A compiled module's deep copy whose parameters are leaves, as eager's are."""
    clone = torch.jit._recursive.wrap_cpp_module(copy.deepcopy(self._c, memo))
    for param in clone.parameters():
        param.detach_().requires_grad_(True)
    return clone


def _script_keeping_non_persistent_buffers(script: Any) -> Any:
    """``torch.jit.script`` whose compiled module leaves out of ``state_dict`` what eager leaves out."""

    def compiled(module: Any, *args: Any, **kwargs: Any) -> Any:
        made = script(module, *args, **kwargs)
        made._non_persistent_buffers_set = set(getattr(module, "_non_persistent_buffers_set", ()))
        return made

    return compiled


@pytest.mark.parametrize("bug_id", first_quick(BUGS))
def test_each_bisect_script_exits_0_where_scriptmodule_behaves_like_eager(monkeypatch, bug_id):
    monkeypatch.setattr(torch.jit, "ScriptModule", Eager)
    monkeypatch.setattr(torch.jit, "script_method", lambda fn: fn)
    monkeypatch.setattr(torch.jit.RecursiveScriptModule, "__deepcopy__", _deepcopy_to_leaves)
    monkeypatch.setattr(torch.jit, "script", _script_keeping_non_persistent_buffers(torch.jit.script))
    code, out = run_here("repro.bisect", bug_id)
    assert code == 0 and "OK:" in out, out


OTHER_TORCH = "REPRO_TORCH_1_13_PYTHON"  # a Python whose environment has torch 1.13.1 (opt-in: -m other_torch)


@pytest.mark.other_torch
def test_torch_1_13_shows_both_instance_behaviours_and_no_compile(tmp_path):
    """On torch 1.13.1 a class's first instance registers the full backward hook silently and the hook
    never runs; later instances raise. ``Module.compile`` does not exist there."""
    import os

    python = os.environ.get(OTHER_TORCH)
    if not python:
        pytest.skip(f"set {OTHER_TORCH} to a python with torch==1.13.1 installed")
    proc = run(["-m", "repro", "--json", "--slow"], cwd=tmp_path, python=python, timeout=600)
    report = json.loads(proc.stdout)
    flag = [
        s
        for s in report["scenarios"]
        if s["api"] == "register_full_backward_hook" and s["verdict"] not in ("unavailable", "refused")
    ]
    assert {(s["instance"], s["verdict"]) for s in flag if s["cause"] == "full-backward-hook-flag"} == {
        ("first", "differs"),
        ("later", "raises"),
    }
    # hooks on m.linear are refused; a subclass child's hooks are child-hooks-bypassed's: none unexplained
    assert [s["name"] for s in flag if s["verdict"] != "match" and s["cause"] is None] == []
    assert {b["id"]: b["status"] for b in report["bugs"]}["module-compile-noop"] == "not-applicable"


def test_a_release_before_the_api_is_not_applicable_from_module_py_alone():
    """Releases before 1.8 lack register_full_backward_hook, and the oldest wheels lack the jit files too."""
    module = str(installed_sources()["torch/nn/modules/module.py"]).replace(
        "def register_full_backward_hook(", "def register_full_backward_hook_absent("
    )
    verdict = BUGS["full-backward-hook-flag"].static({"torch/nn/modules/module.py": module})
    assert verdict.verdict == "not-applicable" and "added in torch 1.8" in verdict.evidence[0]


def test_no_code_names_a_bug_id_outside_the_catalogue():
    """A bug's kit is its catalogue module: other code asks the catalogue (``BUGS``, ``WITH_FIXES``,
    a ``Bug``'s fields). The schema-1 ledger migration and the thin bisect entries are the exceptions."""
    allowed = {ROOT / "repro" / "ledger.py", *(ROOT / "repro").glob("*_bug.py")}
    code = [
        path
        for folder in ("repro", "tracker", "benchmarks")
        for path in (ROOT / folder).rglob("*.py")
        if path not in allowed and (ROOT / "repro" / "catalogue") not in path.parents
    ]
    naming = {str(path.relative_to(ROOT)): [b for b in BUGS if b in path.read_text()] for path in code}
    assert {path: ids for path, ids in naming.items() if ids} == {}


# Everything a bug's module holds; a bug that has no such thing declares it (no_static, a workaround
# whose apply is None, "not reported yet").
ELEMENTS = {
    "scope": lambda bug: bool(bug.apis and bug.styles and bug.models),
    "a measured departure its recogniser knows": lambda bug: bool(bug.departures),
    "static signature or why none": lambda bug: bool(bug.pieces) != bool(bug.no_static),
    "paste-ready text ending in an assert or the bug's error": lambda bug: (
        "assert" in bug.paste.lower() or bool(bug.errors)
    ),
    "root cause": lambda bug: bug.root_cause is not None,
    "workaround or none with what was tried": lambda bug: (
        bug.workaround is not None and (bug.workaround.apply is not None or bool(bug.workaround.tried))
    ),
    "upstream report or 'not reported yet'": lambda bug: bool(bug.upstream),
}


@pytest.mark.parametrize("element", list(ELEMENTS))
@pytest.mark.parametrize("bug_id", list(BUGS))
def test_each_bug_holds_each_element_or_declares_none(bug_id, element):
    assert ELEMENTS[element](BUGS[bug_id])


@pytest.mark.parametrize("bug_id", BUGS)
def test_the_paste_ready_text_can_end_as_the_bug_says(bug_id):
    """An assert's text or its error: ``paste_ends`` begins the last line ``paste`` prints (run in
    tests/filing/test_filing.py)."""
    bug = BUGS[bug_id]
    kind, _, message = bug.paste_ends.partition(": ")
    assert kind.endswith("Error") and message
    assert message.split("'")[0][:20] in bug.paste or any(message.startswith(e) for e in bug.errors)


def test_no_bug_folder_imports_another():
    """What bugs share lives in repro/catalogue/shared.py (or bug, fixes, measure): one bug's folder
    changes without touching another's."""
    import ast

    folders = {bug.id.replace("-", "_") for bug in BUGS.values()}
    assert {p.name for p in (ROOT / "repro" / "catalogue").iterdir() if (p / "__init__.py").is_file()} == folders
    found = {}
    for folder in sorted(folders):
        imported = set()
        for path in (ROOT / "repro" / "catalogue" / folder).rglob("*.py"):
            tree = ast.parse(path.read_text())
            imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
            imported |= {
                f"{n.module}.{a.name}" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names
            }
            imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        others = {f"repro.catalogue.{other}" for other in folders - {folder}}
        found[folder] = sorted(m for m in imported if any(m == o or m.startswith(f"{o}.") for o in others))
    assert {folder: others for folder, others in found.items() if others} == {}


def test_the_registry_is_the_folders_in_catalogue_order():
    """Adding a bug is adding its folder: the registry finds it; ``Bug.number`` orders every list."""
    assert [bug.number for bug in BUGS.values()] == list(range(1, len(BUGS) + 1))
