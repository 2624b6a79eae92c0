"""The filing kit: root cause, candidate fixes, the upstream patch, the workaround, the issue body."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import cmarkgfm
import pytest
import torch

from helpers import A_BUG, ROOT, fake_broken_npu, first_quick, run, run_json, write_ledger
from repro import workaround
from repro.catalogue import BUGS, select
from repro.catalogue.fixes import Candidate, PatchError
from repro.catalogue.full_backward_hook_flag import BUG, RootCause, explain, patch_both
from repro.engine.models import INSTANCES, STYLES, build_eager, build_scripted, styles_of
from repro.filing.candidates import InstalledSources, applied, candidates_of, classify, judge, run_key
from repro.formats.markdown import ATTRIBUTION
from repro.formats.text import render_candidates
from repro.ledger import release_key
from repro.sanitise import code_names, plain
from repro.source_checks import (
    RECURSIVE_PY,
    SCRIPT_PY,
    StaticVerdict,
    installed_sources,
    installed_torch_root,
    loaded_sources,
)
from repro.vocabulary import StaticStatus

CANDIDATES = candidates_of(BUGS[A_BUG])
TEST_PATH, REGISTRATION = BUG.fixes.patch.test.path, BUG.fixes.patch.test.registration


@pytest.fixture
def ledger(tmp_path):
    return write_ledger(tmp_path / "ledger.json")


def _cited_line(evidence: str) -> str:
    """The line the evidence cites, in the source this process imported (a patched torch's included)."""
    path, line = evidence.split(":")[:2]
    return (loaded_sources()[path] or "").splitlines()[int(line) - 1]


@pytest.mark.needs_bug(A_BUG)
def test_root_cause_is_measured_on_the_installed_torch():
    cause = explain()  # in this process, on the torch the suite runs
    assert (cause.flag_type, cause.flag_on_wrapper, cause.static.verdict) == ("NoneType", False, "present")
    ignored, assigns, forwards = cause.static.evidence
    assert "ignored_attributes" in _cited_line(ignored)
    assert "self._is_full_backward_hook = True" in _cited_line(assigns)
    assert "setattr(self._actual_script_module" in _cited_line(forwards)
    assert len(cause.chain()) == 4 and "NoneType" in cause.chain()[1]


@pytest.mark.needs_bug(A_BUG)
@pytest.mark.slow
def test_root_cause_changes_with_the_fix():
    proc = run(["-m", "repro.run_patched", f"{A_BUG}:upstream-patch", "-m", "repro", "--explain", "--bug", A_BUG])
    assert proc.returncode == 0
    assert "typed nothing (not an attribute of the C++ class)" in proc.stdout and "still holds" in proc.stdout
    assert "ignored_attributes now lists" in proc.stdout


def _scenario(api: str, name: str, verdict: str, bug: str | None = A_BUG) -> dict:
    cause = bug if verdict in ("raises", "differs") else None
    return {
        "api": api,
        "name": name,
        "model": "flat",
        "style": "script_method",
        "instance": "later",
        "verdict": verdict,
        "scripted_raised": verdict == "raises",
        "covered_by": [bug] if bug else [],
        "cause": cause,
        "detail": "what the oracle saw",
    }


FULL_CALLED = _scenario("register_full_backward_hook", "called with grad_input and grad_output", "match")
WORKING = _scenario("register_forward_hook", "called with input and output", "match", bug=None)
OTHER_BUG = _scenario(
    "register_module_forward_hook", "runs for the model and its child", "differs", bug="global-hooks-root-only"
)


SIGNATURE = "Could not cast attribute '_is_full_backward_hook' to type NoneType"


def as_before(scenarios: list[dict]) -> set:
    """Torch as installed, without the candidate, refused each of these runs that refuses."""
    return {run_key(s) for s in scenarios}


SEEN = "register_full_backward_hook: called with grad_input and grad_output (flat, script_method)"


@pytest.mark.parametrize(
    ("scenarios", "expected"),
    [
        (
            [FULL_CALLED, WORKING, {**WORKING, "verdict": "unavailable"}, OTHER_BUG],
            (1, 1, 2, 2, "fix", "every judged scenario run matches eager"),
        ),
        (
            [{**FULL_CALLED, "verdict": "differs", "cause": A_BUG}, WORKING],
            (0, 1, 1, 2, "hides the error", f"{SEEN}: what the oracle saw"),
        ),
        (
            [{**FULL_CALLED, "verdict": "raises", "cause": A_BUG, "detail": SIGNATURE}, WORKING],
            (0, 1, 1, 2, "incomplete", f"{SEEN}: {SIGNATURE}"),
        ),
        (
            [{**FULL_CALLED, "verdict": "raises", "cause": None, "detail": "refused: see #1"}, WORKING],
            (0, 1, 1, 2, "incomplete", f"{SEEN}: refused: see #1"),
        ),
        (
            [{**FULL_CALLED, "verdict": "refused", "detail": "types: ... (by design: ...)"}, WORKING],
            (1, 1, 2, 2, "fix", "every judged scenario run matches eager"),
        ),
        (
            [{**FULL_CALLED, "verdict": "refused", "scripted_raised": True, "detail": "not supported"}, WORKING],
            (0, 0, 1, 1, "cannot judge", "none of the bug's own runs was judged"),
        ),
    ],
    ids=[
        "every-scenario-matches",
        "registers-but-misbehaves",
        "still-raises",
        "raises-without-a-refusal",
        "designed-difference-in-scope",
        "each-own-run-refused",
    ],
)
def test_candidate_is_a_fix_only_when_every_scenario_matches(scenarios, expected):
    r = classify(BUGS[A_BUG], CANDIDATES["ignored-attributes"], scenarios, as_before(scenarios))
    assert (r.own_matches, r.own_total, r.matches, r.total, r.verdict, r.detail) == expected


BY_DESIGN = {**FULL_CALLED, "verdict": "refused", "scripted_raised": True, "detail": "not supported (by design: ...)"}


@pytest.mark.parametrize(
    ("scenarios", "before", "expected"),
    [
        ([BY_DESIGN, WORKING], [], (0, 1, 1, 2, "incomplete")),
        ([BY_DESIGN, {**BY_DESIGN, "instance": "first"}, WORKING], [BY_DESIGN], (0, 1, 1, 2, "incomplete")),
        ([FULL_CALLED, {**BY_DESIGN, "api": "register_forward_hook"}], [], (1, 2, 1, 2, "incomplete")),
        ([BY_DESIGN, WORKING], [BY_DESIGN], (0, 0, 1, 1, "cannot judge")),
    ],
    ids=["own-run-newly-refused", "later-call-refused-first-newly", "working-run-newly-refused", "refused-before"],
)
def test_a_refusal_the_candidate_brings_is_its_departure(scenarios, before, expected):
    """TorchScript's design explains the refusal, but torch as installed did not refuse that run: the
    candidate broke it, so it is never left out of the judging (never a fix by refusing)."""
    r = classify(BUGS[A_BUG], CANDIDATES["ignored-attributes"], scenarios, as_before(before))
    assert (r.own_matches, r.own_total, r.matches, r.total, r.verdict) == expected
    assert ("refused only with the candidate: not supported" in r.detail) == (r.verdict == "incomplete")


LOUD = Candidate("refuses", "upstream", "raise where eager cannot be matched", refusal="refused: see #1")
REFUSING = {**FULL_CALLED, "verdict": "raises", "cause": None, "detail": "RuntimeError: refused: see #1"}


@pytest.mark.parametrize(
    ("scenarios", "verdict"),
    [
        ([REFUSING, WORKING], "loud"),
        ([REFUSING, {**REFUSING, "api": "register_backward_hook"}, WORKING], "loud"),
        ([REFUSING, {**WORKING, "verdict": "differs"}], "hides the error"),  # the bug raised; now silent
        ([REFUSING, {**REFUSING, "detail": "RuntimeError: something else"}], "incomplete"),  # another error
        ([REFUSING, {**WORKING, **{k: REFUSING[k] for k in ("verdict", "detail")}}], "incomplete"),  # out of scope
        ([FULL_CALLED, WORKING], "fix"),  # a refusal that never fires and every run matching: a fix
    ],
    ids=[
        "one-refusal",
        "every-departure-refused",
        "silent-departure-left",
        "another-error",
        "refused-out-of-scope",
        "nothing-refused",
    ],
)
def test_candidate_is_loud_only_when_every_departure_raises_its_refusal(scenarios, verdict):
    assert classify(BUGS[A_BUG], LOUD, scenarios, as_before(scenarios)).verdict == verdict


def test_a_candidate_whose_refusal_design_explains_is_loud_where_torch_did_not_refuse():
    """A loud candidate's own refusal may read like one TorchScript's design has: it counts as the
    candidate's refusal where torch as installed ran the call."""
    designed_text = Candidate("refuses", "upstream", "refuse like TorchScript", refusal="not supported")
    assert classify(BUGS[A_BUG], designed_text, [BY_DESIGN, WORKING], set()).verdict == "loud"


@pytest.mark.parametrize(
    "scenarios", [[], [{**FULL_CALLED, "verdict": "unavailable"}, OTHER_BUG]], ids=["no-scenario", "none-judged"]
)
def test_candidate_is_never_a_fix_when_nothing_was_judged(scenarios):
    """What a TorchScript-disabled run reports (no scenario at all) is not '0/0 match: fix'."""
    r = classify(BUGS[A_BUG], CANDIDATES["upstream-patch"], scenarios, set())
    assert (r.own_matches, r.own_total, r.matches, r.total, r.verdict) == (0, 0, 0, 0, "cannot judge")


def test_root_cause_says_what_it_could_not_measure():
    cause = RootCause("unknown (TorchScript unusable: ...)", None, StaticVerdict(StaticStatus.PRESENT, []))
    assert "may or may not hold (not measured)" in cause.chain()[1] and "no longer holds" not in cause.chain()[1]


@contextlib.contextmanager
def _refusing_where_nested():
    """The workaround's registration, refusing (as stateless' by-design refusal reads) on a module with
    children: where torch as installed raised the bug's error, a refusal the candidate brings."""

    def register(self: torch.nn.Module, hook, prepend: bool = False):
        if any(True for _ in self.children()):
            raise RuntimeError("The stateless API can't be used with Jitted modules")
        return workaround.register_full_backward_hook(self, hook, prepend=prepend)

    with workaround.routed("register_backward_hook"):
        with workaround.replaced(torch.jit.ScriptModule, "register_full_backward_hook", register):
            yield


@pytest.mark.slow  # a candidate judged by whole runs (2 s)
def test_a_candidate_refusing_some_runs_as_design_would_is_not_a_fix():
    """Judged for real, in this process: it matches eager wherever it registers, and its other runs
    raise a refusal the by-design table knows. Torch as installed raised the bug's error there, so the
    refusal is the candidate's departure, not TorchScript's design."""
    from repro.filing.candidates import judge_all

    refusing = Candidate("refuses-nested", "user", "fix flat modules, refuse nested", apply=_refusing_where_nested)
    bug = replace(BUGS[A_BUG], fixes=replace(BUGS[A_BUG].fixes, candidates=(refusing,)))
    (result,) = judge_all(bug, "cpu", apart={}, sides=("user",))
    assert result.verdict == "incomplete" and 0 < result.own_matches < result.own_total, result
    assert "refused only with the candidate: " in result.detail and "Jitted modules" in result.detail


def test_the_baseline_reuses_runs_already_made_on_torch_as_installed(monkeypatch):
    """An issue body's report ran the same scenarios unpatched: the baseline takes its refusals from
    it and runs nothing again."""
    import repro.engine.oracle
    from repro import catalogue
    from repro.engine.oracle import run_all
    from repro.filing.candidates import Unpatched
    from repro.report import scenario_summary

    scenario = next(s for s in select([], False).scenarios if s.name == "on a submodule (m.linear)")
    known = run_all("cpu", [scenario], explains=catalogue.explain).results
    monkeypatch.setattr(repro.engine.oracle, "run_all", lambda *a, **k: pytest.fail("ran again"))
    refused = Unpatched(BUGS[A_BUG], "cpu", known=known).refused([scenario_summary(r) for r in known])
    assert refused and refused == {run_key(scenario_summary(r)) for r in known if r.verdict == "refused"}


def test_the_baseline_measured_ahead_is_the_one_measured_on_demand(monkeypatch):
    """While a candidate's process runs, the baseline measures the first scenario of the bug's own APIs
    (``prefetch``): later it gives what a baseline measuring on demand gives, and runs nothing twice."""
    import repro.engine.oracle
    from repro.filing.candidates import Unpatched

    bug = BUGS[A_BUG]
    ahead = Unpatched(bug, "cpu")
    ahead.prefetch()
    ((api, name),) = ahead.measured
    assert api in bug.apis
    wanting = [{"api": api, "name": name, "verdict": "refused", "scripted_raised": True}]
    on_demand = Unpatched(bug, "cpu").refused(wanting)
    monkeypatch.setattr(repro.engine.oracle, "run_all", lambda *a, **k: pytest.fail("ran again"))
    assert ahead.refused(wanting) == on_demand


def test_candidate_whose_process_gives_no_report_cannot_be_judged():
    unknown = Candidate("unknown", "user", "a name run_patched does not know", apply=contextlib.nullcontext)
    result = judge(BUGS[A_BUG], unknown, "cpu")
    assert (result.verdict, result.own_total, result.matches) == ("cannot judge", 0, 0)
    assert "no candidate 'unknown'" in result.detail  # run_patched's last line


def test_a_head_start_that_is_not_needed_leaves_no_process_or_folder_behind():
    """An early exit (bad device, TorchScript unusable) stops what --markdown started for the body."""
    from repro.filing.material import head_start

    started = head_start(BUGS[A_BUG], "cpu")  # the script waits for torch (after_torch): not started
    assert started.script
    folder = Path(started.script._folder.name)
    processes = list(started.candidates.values())
    assert folder.is_dir() and list(started.candidates) == ["upstream-patch"]
    started.stop()
    assert [proc.args for proc in processes if proc.returncode is None] == []
    assert not folder.exists()


FRESH_AND_FORKED = """import json, subprocess, sys, tempfile
import torch
from repro.catalogue import BUGS
from repro.filing.material import NO_BACKEND_AUTOLOAD, SCRIPT_NAME, ScriptRun, shorten
import os
bug = BUGS[sys.argv[1]]
run = ScriptRun(bug)
run.start()
forked = run.result()
with tempfile.TemporaryDirectory() as folder:
    with open(os.path.join(folder, SCRIPT_NAME), "w") as script:
        script.write(bug.paste)
    fresh = subprocess.run([sys.executable, SCRIPT_NAME], cwd=folder, capture_output=True, text=True,
                           env={**os.environ, "PYTHONWARNINGS": "ignore", **NO_BACKEND_AUTOLOAD})
    printed = (fresh.stdout + fresh.stderr).replace(os.path.realpath(folder) + "/", "").replace(folder + "/", "")
print(json.dumps({"forked": forked, "fresh": [shorten(printed).strip(), fresh.returncode]}))
"""


@pytest.mark.slow
@pytest.mark.needs_bug(A_BUG)
@pytest.mark.parametrize("bug_id", list(BUGS))
def test_the_script_forked_after_import_torch_prints_what_a_fresh_interpreter_prints(bug_id):
    """The issue body runs the paste-ready script in a copy of its process forked once torch is
    imported: what it printed, and its exit code, are what ``python bug.py`` gives."""
    proc = run(["-c", FRESH_AND_FORKED, bug_id])
    assert proc.returncode == 0, proc.stderr[-2000:]
    runs = {
        how: (re.sub(r"0x[0-9a-f]+", "0x...", output), code)  # addresses differ from one process to the next
        for how, (output, code) in json.loads(proc.stdout.splitlines()[-1]).items()
    }
    assert runs["forked"] == runs["fresh"] and runs["forked"][1] == 1, runs


def _apply_and_revert_each() -> None:
    for candidate in (c for bug in BUGS.values() for c in candidates_of(bug).values() if c.in_process):
        with applied(candidate):
            pass


def test_candidates_judged_in_this_process_leave_torch_as_it_was():
    """Applied and reverted one after another: nothing of one candidate is left for the next run."""
    import torch.jit._recursive

    before = (list(torch.jit._recursive.ignored_attributes), dict(vars(torch.jit.ScriptModule)))
    _apply_and_revert_each()
    assert (list(torch.jit._recursive.ignored_attributes), dict(vars(torch.jit.ScriptModule))) == before


@pytest.mark.needs_bug(A_BUG)  # under the upstream patch, torch lists the flag itself
def test_no_candidate_leaves_the_flag_ignored():
    import torch.jit._recursive

    from repro.source_checks import FLAG

    _apply_and_revert_each()
    assert FLAG not in torch.jit._recursive.ignored_attributes


def test_candidates_text_says_which_only_hide_the_error():
    bug = BUGS[A_BUG]
    results = [
        classify(bug, CANDIDATES["ignored-attributes"], [{**FULL_CALLED, "verdict": "differs", "cause": A_BUG}], set()),
        classify(bug, CANDIDATES["upstream-patch"], [FULL_CALLED], set()),
    ]
    text = " ".join(render_candidates(bug, "2.13.0", "cpu", results).split())  # unwrapped: it fits 100 columns
    assert f"Candidate fixes for {A_BUG} on torch 2.13.0" in text
    assert "ignored-attributes (upstream side): add the flag" in text
    assert "the bug's own runs: 0/1 match eager; all judged runs: 0/1" in text
    assert "verdict: HIDES THE ERROR: register_full_backward_hook" in text and "verdict: FIX:" in text
    stopped = render_candidates(bug, "2.13.0", "cpu", [replace(results[0], complete=False)])
    said = " ".join(stopped.split())  # the text wraps at 100 columns
    assert "the bug's own runs: 0/1 match eager; judged no further (not a fix)" in said


@pytest.fixture
def patched_copy(tmp_path):
    """The installed torch's two files copied out, and ``python -m repro --patch`` applied with patch -p1."""
    if shutil.which("patch") is None:
        pytest.skip("needs GNU patch")
    for path in (RECURSIVE_PY, SCRIPT_PY):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(installed_torch_root() / path, tmp_path / path)
    diff = run(["-m", "repro", "--patch", "--bug", A_BUG])
    assert diff.returncode == 0 and diff.stdout.startswith("--- a/torch/jit/_recursive.py")
    assert diff.stderr.startswith("note: the torch/ hunks are against the installed release")
    applied = subprocess.run(
        ["patch", "-p1", "--forward"], input=diff.stdout, cwd=tmp_path, capture_output=True, text=True
    )
    assert applied.returncode == 0, applied.stdout + applied.stderr
    return tmp_path


@pytest.mark.slow
def test_patch_applies_and_every_scenario_matches_eager(patched_copy, tmp_path):
    fixed = write_ledger(tmp_path / "fixed.json", fixed_in=release_key(torch.__version__))
    code, report = run_json(["-m", "repro.run_patched", "--sources", str(patched_copy), "-m", "repro"], ledger=fixed)
    assert code == 0 and {b["id"]: b["status"] for b in report["bugs"]}[A_BUG] == "fixed"
    assert {s["verdict"] for s in report["scenarios"] if s["cause"] is None} == {"match", "refused"}


@pytest.mark.needs_bug(A_BUG)  # its 'before' half needs the bug
@pytest.mark.slow
def test_regression_test_fails_before_the_patch_and_passes_after(patched_copy):
    test_file = str(patched_copy / TEST_PATH)
    # Run it the way a developer does locally: with CI set, torch's run_tests() writes XML reports
    # through xmlrunner, a package of upstream's CI images that this project does not install.
    local = {"CI": ""}
    before = run([test_file], env=local)
    after = run(["-m", "repro.run_patched", "--sources", str(patched_copy), test_file], env=local)
    assert before.returncode != 0 and "Could not cast attribute" in before.stderr
    assert after.returncode == 0, after.stderr
    assert "Ran 3 tests" in after.stderr and "OK" in after.stderr


def test_patch_refuses_sources_that_are_already_fixed():
    once = patch_both(installed_sources((RECURSIVE_PY, SCRIPT_PY)))
    with pytest.raises(PatchError, match="already lists"):
        patch_both(once)


def test_patch_keeps_a_list_without_trailing_comma_valid():
    sources = installed_sources((RECURSIVE_PY, SCRIPT_PY))
    sources[RECURSIVE_PY] = 'ignored_attributes = [\n    "_version",\n    "_modules"\n]\n'
    namespace: dict = {}
    exec(patch_both(sources)[RECURSIVE_PY], namespace)  # our own generated text, not downloaded code
    assert namespace["ignored_attributes"] == ["_version", "_modules", "_is_full_backward_hook"]


@pytest.mark.parametrize("style", STYLES)
def test_workaround_makes_the_full_backward_hook_fire(style):
    calls, eager_calls = [], []
    model, eager = build_scripted("flat", style, "later", "cpu"), build_eager("flat", "cpu")
    handle = workaround.register_full_backward_hook(model, lambda m, gi, go: calls.append((m, gi[0], go[0])))
    workaround.register_full_backward_hook(eager, lambda m, gi, go: eager_calls.append((m, gi[0], go[0])))
    for net in (model, eager):
        net(torch.ones(1, 2, requires_grad=True)).sum().backward()
    assert len(calls) == 1 and calls[0][0] is model
    assert torch.equal(calls[0][1], eager_calls[0][1]) and torch.equal(calls[0][2], eager_calls[0][2])
    handle.remove()
    model(torch.ones(1, 2, requires_grad=True)).sum().backward()
    assert len(calls) == 1


def test_workaround_keeps_the_mixing_rule():
    model = build_scripted("flat", "plain_forward", "later", "cpu")
    workaround.register_backward_hook(model, lambda *args: None)
    with pytest.raises(RuntimeError, match="Cannot use both"):
        workaround.register_full_backward_hook(model, lambda *args: None)


def _outside_collapsed(body: str) -> list[str]:
    """The lines a reader sees before expanding anything, without the Versions block."""
    before_versions = body.split("### Versions")[0]
    return re.sub(r"<details>.*?</details>\n?", "", before_versions, flags=re.DOTALL).splitlines()


def _table_counts(body: str, api: str) -> tuple[int, int, int]:
    """(runs, match, depart) for ``api`` from the collapsed table: one row per scenario run."""
    verdicts = [line.split(" | ")[-1].rstrip(" |") for line in body.splitlines() if line.startswith(f"| {api} | ")]
    return len(verdicts), verdicts.count("match"), verdicts.count("raises") + verdicts.count("differs")


@pytest.mark.needs_bug(A_BUG)
@pytest.mark.parametrize("bug_id", list(BUGS))
@pytest.mark.slow
def test_issue_body_for_each_bug_is_ready_to_paste(tmp_path, ledger, bug_id):
    bug = BUGS[bug_id]
    proc = run(["-m", "repro", "--markdown", "--bug", bug_id], ledger=ledger, env=fake_broken_npu(tmp_path))
    body = proc.stdout
    assert proc.returncode == 0, proc.stderr
    assert body.startswith("### 🐛 Describe the bug") and "### Versions" in body
    assert f"```python\n{bug.paste.rstrip()}\n```" in body  # the catalogue's paste-ready script, verbatim
    output = body.split("(exit code 1):\n\n```\n")[1].split("\n```")[0]  # what running exactly it printed
    assert output.startswith('Traceback (most recent call last):\n  File "bug.py", line ')
    assert output.splitlines()[-1].startswith(BUGS[bug_id].paste_ends)  # the bug's own error, or its failing assert
    assert len(_outside_collapsed(body)) < 80
    html = cmarkgfm.github_flavored_markdown_to_html(body)  # GitHub's parser: our code names are never bold
    assert re.findall(r"<strong>[a-z_]*</strong>", html) == []
    assert str(ROOT) not in body and str(Path.home()) + "/" not in body and "/tmp/" not in body
    assert [line for line in body.splitlines() if "/site-packages/" in line and ".../site-packages/" not in line] == []
    assert [line for line in body.splitlines() if "repro" in line] == [ATTRIBUTION]  # no tool of ours but this
    shown = 0
    for api in bug.apis:  # each summary row counts runs of the collapsed table under it, in the bug's scope
        row = next((line for line in body.splitlines() if line.startswith(f"| `{api}` | ")), None)
        if row is None:  # none of this API's runs is in the bug's scope on this torch
            continue
        runs, match, this_bug, otherwise = (int(n) for n in row.strip("| ").split(" | ")[1:])
        assert runs == match + this_bug + otherwise and runs <= _table_counts(body, api)[0]
        shown += this_bug
    assert shown > 0  # the body runs its bug's whole scope: its own cases show
    assert "PyTorch version: " + torch.__version__ in body  # torch.utils.collect_env
    assert "torch_npu: 2.13.0 installed but cannot load" in body and "CANN: not found" in body
    cause = body.split("Root cause, as measured on this torch:\n")[1]
    assert cause.startswith("1. ") and "\nWorkaround until a fix: " in cause  # the steps, then what to do today
    proposed = "<summary>Proposed patch, incomplete: " if bug.fixes.patch.leaves else "<summary>Proposed fix"
    assert proposed in body and f"+++ b/{bug.fixes.patch.test.path}" in body
    loud = re.search(r"Under the proposed patch (\d+) of (\d+) of the bug's own runs match eager", body)
    if bug.fixes.patch.refusal:  # a loud patch: the body names the C++ cause and what the patch still fixes
        assert loud and int(loud[1]) < int(loud[2]) and plain(bug.fixes.patch.cpp) in body, body
    else:
        assert loud is None and "No candidate here matches eager" not in body
    if bug_id != A_BUG:
        return
    assert "pytorch/pytorch#181473" in body and "test_register_full_backward_hook_raises" in body
    assert "+                return super().__setattr__(attr, value)" in body
    upstream = [c for c in CANDIDATES.values() if c.side == "upstream"]  # the user-side ones are for --candidates
    rows = {
        c.name: re.search(
            rf"^\| {re.escape(code_names(c.summary.split(' (')[0]))} \| upstream \| (\d+)/(\d+)([^|]*) \| "
            r"([a-z ]+) \|$",
            body,
            re.MULTILINE,
        )
        for c in upstream
    }
    assert [name for name, row in rows.items() if not row] == [], rows
    verdicts = {name: row.groups() for name, row in rows.items() if row}
    assert "| user |" not in body
    body_runs = select([], False, also=(bug_id,)).scenarios  # the default tier and the bug's whole scope
    default_runs = sum(len(styles_of(s.model)) * len(INSTANCES) for s in body_runs)
    matched, judged = (int(n) for n in verdicts["upstream-patch"][:2])
    assert matched == judged and 0 < judged <= default_runs  # every run it was judged on matched eager
    assert verdicts["upstream-patch"][2:] == (" scenario runs", "fix")  # judged for real, on the default tier
    # what the candidates judge first: the bug's own runs, but those TorchScript refuses by design (a hook
    # on m.linear); with the flag left None each of them departs, as each departs here through the bug
    hidden, judged_own, said, verdict = verdicts["ignored-attributes"]  # the flag stays None: none matches
    assert (hidden, said, verdict) == (
        "0",
        " of the bug's own scenario runs (judged no further: not a fix)",
        "hides the error",
    )
    assert 0 < int(judged_own) <= shown  # its own runs the summary rows count, but those another bug explains
    measured = body.split("In the same run, ")[1].split("\n")[0]  # the only sentence that calls APIs working
    assert "`register_state_dict_post_hook`" in measured and "matched the eager twin" in measured
    assert "`register_module_forward_hook`" not in measured and "`register_forward_hook`" not in measured
    progress = [line.split(": ")[1] for line in proc.stderr.splitlines() if line.startswith("candidate ")]
    assert sorted(progress) == sorted(c.name for c in upstream)  # one progress line per candidate, as each finishes


def test_a_cause_this_torch_will_not_measure_is_a_step_not_a_traceback():
    """A torch with a loud upstream patch refuses what a root cause measures (quantize_dynamic of a
    ScriptModule, say): --explain says so in a step."""
    from repro.catalogue import steps

    def refused(evidence: list[str]) -> list[str]:
        raise RuntimeError("quantize_dynamic quantizes eager modules only.\nsecond line")

    found = steps(replace(BUGS[A_BUG], root_cause=refused))
    assert found[-1] == (
        "Measuring the cause raised RuntimeError: quantize_dynamic quantizes eager modules only. This torch "
        "does not behave as the bug describes, so its cause is not measured here."
    )


@pytest.mark.parametrize("bug_id", first_quick(pytest.param(b, marks=pytest.mark.needs_bug(A_BUG, b)) for b in BUGS))
def test_explain_gives_each_bugs_cause_as_numbered_steps_with_file_and_line(bug_id):
    """Every catalogued bug: its steps, measured here; each Python piece cited where it is in the
    installed torch, each C++ one by path and upstream commit; the workaround last; no markup."""
    from repro.catalogue import steps
    from repro.formats.text import render_cause

    bug = BUGS[bug_id]
    assert bug.root_cause is not None, f"{bug_id} has no root cause"
    found = steps(bug)
    text = render_cause(torch.__version__, bug, found)
    assert len(found) >= 3 and "``" not in text and "measured" in " ".join(found).lower()
    cited = re.findall(r"(torch/[\w/]+\.py):(\d+)", " ".join(found))
    assert cited, found
    for path, line in cited:  # each cited line exists in the installed torch
        assert 0 < int(line) <= len((installed_torch_root() / path).read_text().splitlines())
    for cpp in re.findall(r"torch/csrc/\S+\.cpp at upstream commit (\w+)", " ".join(found)):
        assert re.fullmatch(r"[0-9a-f]{40}", cpp)
    assert [line for line in text.splitlines() if line.startswith("Workaround: ")] and max(
        map(len, text.splitlines())
    ) <= 100


WITH_FIXES = list(BUGS)  # every bug has an upstream patch (Bug.fixes is required)


@pytest.mark.needs_bug(A_BUG)
@pytest.mark.parametrize("bug_id", first_quick(WITH_FIXES))  # a git repository each
def test_each_patch_applies_to_a_checkout_with_its_test_registered(checkout, bug_id):
    patch = BUGS[bug_id].fixes.patch
    proc = run(["-m", "repro", "--patch", "--bug", bug_id, "--against", str(checkout)])
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert [f"+++ b/{path}" for path in patch.files if f"+++ b/{path}" not in proc.stdout] == []
    subprocess.run(["git", "apply", "-"], cwd=checkout, input=proc.stdout, text=True, check=True)
    assert (checkout / patch.test.path).read_text() == patch.test.text
    if patch.test.runner:
        assert patch.test.registration in (checkout / patch.test.runner).read_text().splitlines()
    for path in patch.files:  # every edited file still parses
        compile((checkout / path).read_text(), path, "exec")


@pytest.fixture
def copy_of(tmp_path):
    """The installed torch's files ``bug``'s patch edits, copied out, with ``--patch --bug`` applied by
    GNU patch as a developer would (the regression test file lands there too)."""
    if shutil.which("patch") is None:
        pytest.skip("needs GNU patch")

    def patched(bug_id: str) -> Path:
        folder = tmp_path / bug_id
        for path in BUGS[bug_id].fixes.patch.files:
            (folder / path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(installed_torch_root() / path, folder / path)
        diff = run(["-m", "repro", "--patch", "--bug", bug_id])
        assert diff.returncode == 0, diff.stderr
        applied = subprocess.run(
            ["patch", "-p1", "--forward"], input=diff.stdout, cwd=folder, capture_output=True, text=True
        )
        assert applied.returncode == 0, applied.stdout + applied.stderr
        return folder

    return patched


@pytest.mark.needs_bug(A_BUG)  # its 'before' half needs the bug
@pytest.mark.slow
@pytest.mark.parametrize("bug_id", WITH_FIXES)
def test_each_regression_test_fails_before_its_patch_and_passes_after(copy_of, bug_id):
    folder = copy_of(bug_id)
    test_file = str(folder / BUGS[bug_id].fixes.patch.test.path)
    local = {"CI": ""}  # torch's run_tests() writes XML through xmlrunner under CI, which is not installed
    before = run([test_file], env=local)
    after = run(["-m", "repro.run_patched", "--sources", str(folder), test_file], env=local)
    assert before.returncode != 0 and "FAILED" in before.stderr, before.stderr[-2000:]
    assert after.returncode == 0 and "OK" in after.stderr.splitlines()[-1], after.stderr[-2000:]


@pytest.mark.needs_bug(A_BUG)
def test_patch_against_a_checkout_applies_there_and_registers_the_test(checkout):
    proc = run(["-m", "repro", "--patch", "--bug", A_BUG, "--against", str(checkout)])
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert (
        "+from jit.test_script_module_backward_hooks import TestScriptModuleBackwardHooks  # noqa: F401" in proc.stdout
    )
    assert f"+++ b/{TEST_PATH}" in proc.stdout and "--- a/test/test_jit.py" in proc.stdout
    check = subprocess.run(
        ["git", "apply", "--check", "-"], cwd=checkout, input=proc.stdout, capture_output=True, text=True
    )
    assert check.returncode == 0, check.stderr
    subprocess.run(["git", "apply", "-"], cwd=checkout, input=proc.stdout, text=True, check=True)
    lines = (checkout / "test" / "test_jit.py").read_text().splitlines()
    assert lines.index(REGISTRATION) == lines.index("from jit.test_hooks import TestHooks  # noqa: F401") + 1


@pytest.mark.parametrize("layout", ["missing", "not-pytorch"])
def test_patch_against_something_else_is_one_sentence(tmp_path, layout):
    target = tmp_path / "absent" if layout == "missing" else tmp_path
    proc = run(["-m", "repro", "--patch", "--bug", A_BUG, "--against", str(target)])
    assert proc.returncode == 2 and proc.stdout == "" and len(proc.stderr.strip().splitlines()) == 1
    assert ("is not a folder" if layout == "missing" else "is not a PyTorch checkout") in proc.stderr


@pytest.mark.parametrize("bug_id", first_quick(WITH_FIXES))
def test_each_patch_refuses_sources_it_already_patched(bug_id):
    patch = BUGS[bug_id].fixes.patch
    once = patch.edit(InstalledSources())
    with pytest.raises(PatchError):
        patch.edit({**{path: InstalledSources()[path] for path in patch.files}, **once})


@pytest.mark.parametrize("bug_id", [b for b in WITH_FIXES if BUGS[b].fixes.patch.refusal])
def test_each_loud_patch_writes_its_refusal_into_torch(bug_id):
    """The refusal the report and the flip tests look for is in the lines the patch inserts (they come
    from the folder's inserted.py, where nothing else ties them to ``REFUSAL``)."""
    patch = BUGS[bug_id].fixes.patch
    assert any(patch.refusal in text for text in patch.edit(InstalledSources()).values())


@pytest.mark.parametrize("bug_id", WITH_FIXES)
def test_each_patch_says_in_one_sentence_what_sources_of_another_shape_lack(bug_id):
    """A release or checkout where the lines an edit extends are gone: one sentence, never a traceback."""
    patch = BUGS[bug_id].fixes.patch
    for sources in ({path: "x = 1\n" for path in patch.files}, {}, {path: "def (:\n" for path in patch.files}):
        with pytest.raises(PatchError) as refused:
            patch.edit(sources)
        assert str(refused.value).endswith(".") and "\n" not in str(refused.value), refused.value
