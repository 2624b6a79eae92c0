"""``python -m repro`` and the minimal script.

Checks that need no fresh interpreter (the JSON content, drift, device resolution, a candidate
fix in force) call ``repro.cli.main`` or run the script in this process: torch is already
imported here, which saves the seconds each subprocess spends importing it. What only a fresh
interpreter shows (stderr of a whole run, an environment variable read at ``import torch``, a
broken torch_npu, a patch applied before torch loads) runs in subprocesses, in the slow tier.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch

from helpers import (
    A_BUG,
    ROOT,
    SLOW_BUGS,
    expected,
    fake_broken_npu,
    first_quick,
    run,
    run_here,
    run_json,
    write_fixed_ledger,
    write_ledger,
)
from repro.catalogue import BUGS, explain, select
from repro.cli import main
from repro.engine.oracle import run_scenario
from repro.engine.scenarios import SCENARIOS
from repro.filing.candidates import applied, candidates_of
from repro.formats.text import side_cell
from repro.ledger import ledger_path

SCRIPT = str(ROOT / "repro" / "full_backward_hook_bug.py")


@pytest.fixture
def ledger():
    """The ledger the suite runs against: these tests follow its expectation for the installed torch."""
    return ledger_path()


def bug_expected() -> bool:
    return expected().outcome == "present"


@pytest.fixture
def repro_main(monkeypatch, capsys):
    """``python -m repro ARGS`` in this process with another ledger: (exit code, stdout, stderr)."""

    def call(ledger, *argv: str) -> tuple[int, str, str]:
        monkeypatch.setenv("REPRO_LEDGER", str(ledger))
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return call


REAL_TORCH_NPU = ROOT / ".tools" / "torch_npu"  # pip install --no-deps --target .tools/torch_npu torch_npu==2.13.0


@pytest.fixture(params=["simulated", "torch_npu-2.13.0"])
def broken_npu(request, tmp_path):
    """torch_npu installed without its CANN runtime: the simulation, and the real wheel where installed."""
    if request.param == "simulated":
        return fake_broken_npu(tmp_path)
    if not (REAL_TORCH_NPU / "torch_npu").is_dir():
        pytest.skip("needs `pip install --no-deps --target .tools/torch_npu torch_npu==2.13.0` (.ci/run does it)")
    return {"PYTHONPATH": f"{ROOT}:{REAL_TORCH_NPU}"}


def test_json_report_shows_each_bug_next_to_working_apis(repro_main, ledger):
    code, out, _ = repro_main(ledger, "--json")
    report = json.loads(out)
    assert code == 0 and report["schema"] == 6 and report["matches_expectation"] is True
    assert [b["id"] for b in report["bugs"] if b["root_cause"] is not None] == []  # no bug named: none measured
    assert report["torch_version"] == torch.__version__ and report["device"] == "cpu"
    statuses = {b["id"]: b["status"] for b in report["bugs"]}
    assert statuses == {
        bug_id: "skipped" if bug_id in SLOW_BUGS else expected(bug_id).outcome for bug_id in BUGS
    }  # the compile and checkpoint checks load dynamo: only when asked
    present = {bug_id for bug_id, status in statuses.items() if status == "present"}
    assert report["outcome"] == ("present" if present else "fixed") and report["bug_present"] is bool(present)
    departing = [s for s in report["scenarios"] if s["verdict"] in ("raises", "differs", "error")]
    shown = present | {bug_id for bug_id, status in statuses.items() if status == "incomplete-fix"}  # loud patch in
    assert {s["api"] for s in departing} <= {api for bug_id in shown for api in BUGS[bug_id].apis}
    assert {s["cause"] for s in departing} == shown  # each bug checked present shows in a run of its own
    assert [
        (s["api"], s["name"], s["style"], s["instance"], s["cause"], s["covered_by"])
        for s in departing
        if not (s["cause"] in shown and s["cause"] in s["covered_by"])
    ] == []
    assert [
        (s["api"], s["name"], s["style"], s["instance"], s["detail"])
        for s in departing
        if s["cause"] == A_BUG and "_is_full_backward_hook" not in s["detail"]
    ] == []
    assert {s["style"] for s in report["scenarios"]} == {"script_method", "plain_forward"}
    assert len(report["scenarios"]) >= 100 and {s["tier"] for s in report["not_run"]} == {"variant", "slow"}


def test_one_bug_at_a_time_and_the_catalogue_listed(repro_main, ledger):
    code, out, _ = repro_main(ledger, "--json", "--bug", "global-backward-hooks-scripted")
    report = json.loads(out)
    assert code == 0 and {s["api"] for s in report["scenarios"]} == set(BUGS["global-backward-hooks-scripted"].apis)
    assert {b["status"] for b in report["bugs"] if b["id"] != "global-backward-hooks-scripted"} == {"skipped"}
    code, out, _ = repro_main(ledger, "--list-bugs")
    listed, refusals = out.split("By design (not bugs)")
    assert code == 0 and [line.split(":")[0] for line in listed.splitlines() if line and line[0] != " "] == list(BUGS)
    designed, undocumented = refusals.split("Refused, undocumented")
    designed = " ".join(designed.split())
    assert "torch/nn/utils/stateless.py:" in designed and "Source: upstream test test/test_stateless.py" in designed
    assert "torch/jit/_script.py:" in undocumented and "Source:" not in undocumented
    code, out, err = repro_main(ledger, "--bug", "no-such-bug")
    assert (code, out) == (2, "") and err.startswith("python -m repro: error: unknown bug id 'no-such-bug'")


@pytest.mark.slow
def test_text_report_has_header_table_and_conclusion(ledger):
    proc = run(["-m", "repro"], ledger=ledger)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"torch {torch.__version__} | Python") and "torch_npu: not installed" in lines[0]
    deprecated = [line for line in lines if "deprecated" in line]  # script_method's and torch.jit.script's
    assert len(deprecated) == len(set(deprecated)) <= 2  # each warning once
    assert "Under each API, a line per scenario" in proc.stdout
    full_hook = lines.index("register_full_backward_hook")  # runs are grouped under their API
    outcome = "raises (full-backward-hook-flag) on " if bug_expected() else "match on "
    assert outcome in lines[full_hook + 1], lines[full_hook + 1]
    last_paragraph = " ".join(proc.stdout.rstrip().split("\n\n")[-1].split())
    assert ("(full-backward-hook-flag" in last_paragraph) is bug_expected()
    assert last_paragraph.endswith("This is as the ledger expects.")
    bug_lines = {
        line.split()[0]: line.split()[1].rstrip(":")
        for line in lines
        if line.startswith("  ") and not line.startswith("   ") and line.split()[0] in BUGS  # not a wrapped reason
    }
    assert bug_lines == {bug_id: "skipped" if bug_id in SLOW_BUGS else expected(bug_id).outcome for bug_id in BUGS}
    assert max(len(line) for line in lines) <= 100, "the report fits 100 columns"
    assert proc.stderr == ""


def test_what_the_default_run_leaves_out_is_counted_with_the_option_that_runs_it(repro_main, ledger):
    _, out, _ = repro_main(ledger)
    left_out = select([], slow=False).not_run
    variants = sum(s.tier == "variant" for s in left_out)
    assert f"Not run here, for speed (python -m repro --slow runs them): {variants} variant scenarios" in " ".join(
        out.split()
    )


def test_a_scenario_without_hook_calls_names_what_was_compared():
    scenario = next(s for s in SCENARIOS if s.name == "can edit the returned state dict in place")
    result = run_scenario(scenario, "plain_forward", "cpu", explains=explain)
    cells = (side_cell(result.scripted), side_cell(result.eager), result.verdict)
    assert cells == ("state dict", "state dict", "match")


@pytest.mark.parametrize(
    "tool",
    [
        pytest.param(["-m", "repro", "--json"], id="repro", marks=pytest.mark.slow),
        pytest.param(["-m", "repro", "--patch", "--bug", A_BUG], id="patch"),
    ],
)
def test_a_reader_that_stops_early_costs_no_traceback(ledger, tool):
    """``python -m repro --json | head -c 0`` (closed before the report is written): the run's exit code
    stands, stderr stays clean."""
    script = (
        "import subprocess, sys; p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)"
        "; p.stdout.close(); err = p.stderr.read(); print(p.wait()); sys.stderr.write(err.decode())"
    )
    proc = run(["-c", script, sys.executable, *tool], ledger=ledger)
    assert proc.stdout.strip() == "0" and "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr


@pytest.mark.slow  # a fresh interpreter that imports torch
def test_what_native_code_prints_during_the_run_goes_to_stderr_and_the_json_report_stays_one_document(ledger):
    """gloo (torch >= 2.8) writes "[Gloo] Rank 0 is connected ..." to descriptor 1 in the DDP scenario: the
    tracker could not parse the report. Here a C-level write stands for it, once per scenario run."""
    noisy = (
        "import os, sys, repro.engine.oracle as o; run = o.run_scenario\n"
        "def noisy(*a, **k):\n    os.write(1, b'[native] connected\\n'); return run(*a, **k)\n"
        "o.run_scenario = noisy; from repro.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    proc = run(["-c", noisy, "--json", "--bug", "copy-shares-training"], ledger=ledger)
    report = json.loads(proc.stdout)  # one document, nothing before or after it
    assert report["bugs"] and "[native] connected" in proc.stderr and proc.returncode == 0


def test_ledger_saying_the_opposite_is_drift(repro_main, tmp_path):
    """A ledger claiming a fix the torch lacks, or the bug on a torch that fixed it."""
    opposite = (
        write_fixed_ledger(tmp_path / "l.json", torch.__version__)
        if bug_expected()
        else write_ledger(tmp_path / "l.json")
    )
    code, out, _ = repro_main(opposite, "--json", "--bug", A_BUG)
    report = json.loads(out)
    assert code == 1 and report["matches_expectation"] is False
    assert report["drift"][0].startswith(f"{A_BUG}: expected {'fixed' if bug_expected() else 'present'}")


@pytest.mark.needs_bug(A_BUG)
def test_fixed_torch_is_drift_while_the_ledger_says_present(repro_main, ledger):
    """A torch whose ScriptModule registers full backward hooks as nn.Module does (the workaround, in
    force on the class). The upstream patch with a ledger that follows:
    test_patch_applies_and_every_scenario_matches_eager."""
    with applied(candidates_of(BUGS[A_BUG])["workaround"]):
        code, out, _ = repro_main(ledger, "--json", "--bug", A_BUG)
    report = json.loads(out)
    assert code == 1 and {b["id"]: b["status"] for b in report["bugs"]}[A_BUG] == "fixed"
    assert report["drift"][0].startswith(f"{A_BUG}: expected present")
    assert any(f"expected {A_BUG} to show, got match" in d for d in report["drift"]), report["drift"]


@pytest.mark.needs_bug(A_BUG)
def test_silenced_error_is_still_the_bug(repro_main, ledger):
    """The ignored_attributes one-liner: registration succeeds, no backward hook ever runs."""
    with applied(candidates_of(BUGS[A_BUG])["ignored-attributes"]):
        code, out, _ = repro_main(ledger, "--json", "--bug", A_BUG)
    report = json.loads(out)
    assert report["outcome"] == "present" and code == 0  # the same bug, in its silent form
    flag_runs = [s for s in report["scenarios"] if A_BUG in s["covered_by"] and s["verdict"] != "refused"]
    assert {(s["verdict"], s["cause"]) for s in flag_runs} == {("differs", A_BUG)} | {  # a nested subclass's
        (s["verdict"], "child-hooks-bypassed") for s in flag_runs if s["cause"] == "child-hooks-bypassed"
    }


@pytest.mark.parametrize(
    ("ledger_text", "message"),
    first_quick(
        [
            ("{not json", "is not valid JSON"),
            ('{"schema": 1, "fixed_in": "2.x", "releases": {}}', "invalid fixed_in"),
            ("[]", "is not a JSON object"),
        ]
    ),
)
def test_bad_ledger_is_one_sentence_exit_2(tmp_path, ledger_text, message):
    bad = tmp_path / "ledger.json"
    bad.write_text(ledger_text)
    proc = run(["-m", "repro"], ledger=bad)
    assert proc.returncode == 2 and proc.stdout == ""
    assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_missing_ledger_is_exit_2(tmp_path):
    proc = run(["-m", "repro"], ledger=tmp_path / "absent.json")
    assert proc.returncode == 2 and "does not exist" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("device", ["cuda", "npu"])
def test_absent_device_is_exit_2(repro_main, ledger, device):
    if device == "cuda" and torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    code, out, err = repro_main(ledger, "--device", device)
    assert (code, out) == (2, "") and f"--device {device} was requested" in err
    assert len(err.strip().splitlines()) == 1


def test_bad_usage_is_exit_2(ledger):
    assert run(["-m", "repro", "--device", "tpu"], ledger=ledger).returncode == 2


def test_minimal_script_cannot_test_when_torchscript_raises_at_class_definition(monkeypatch):
    """What a pending upstream change proposes: `git bisect run` must read 125, not 'bug present'."""
    import torch.jit._recursive

    def disabled(*args, **kwargs):
        raise RuntimeError("TorchScript is deprecated and has been disabled")

    for owner, name in [
        (torch.jit, "script_method"),
        (torch.jit, "script"),
        (torch.jit._recursive, "create_script_module"),
    ]:
        monkeypatch.setattr(owner, name, disabled)
    code, out = run_here(Path(SCRIPT))
    assert code == 125, out
    assert out.strip() == (
        "cannot test: TorchScript is unusable: RuntimeError: TorchScript is deprecated and has been disabled"
    )


@pytest.mark.slow
def test_torchscript_disabled_cannot_test(ledger):
    code, report = run_json(["-m", "repro"], ledger=ledger, env={"PYTORCH_JIT": "0"})
    assert (code, report["outcome"], report["bug_present"]) == (2, "cannot-test", None)
    assert "TorchScript is disabled" in report["cannot_test_reason"]
    assert run([SCRIPT], env={"PYTORCH_JIT": "0"}).returncode == 125
    proc = run(["-m", "repro"], ledger=ledger, env={"PYTORCH_JIT": "0"})  # before: stdout said "this is drift"
    assert proc.returncode == 2 and "drift" not in proc.stdout.lower(), proc.stdout
    assert "nothing is compared with the ledger (an environment error)" in " ".join(proc.stdout.split())


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["--candidates", "--markdown", "--explain"])
def test_torchscript_disabled_is_exit_2_for_the_filing_kit_too(ledger, mode):
    """Nothing observed is nothing to file: no '0/0 scenarios match' fix, no issue body, no measured cause."""
    proc = run(["-m", "repro", mode, "--bug", A_BUG], ledger=ledger, env={"PYTORCH_JIT": "0"})
    assert (proc.returncode, proc.stdout) == (2, "") and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("python -m repro: error: TorchScript is disabled (PYTORCH_JIT=0?)")
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_broken_torch_npu_still_runs_on_cpu(ledger, broken_npu):
    plain = run(["-c", "import torch"], env=broken_npu)
    assert plain.returncode == 1 and "Failed to load the backend extension: torch_npu" in plain.stderr
    code, report = run_json(["-m", "repro", "--bug", A_BUG], ledger=ledger, env=broken_npu)  # one bug: enough
    assert code == 0 and report["device"] == "cpu"
    assert report["torch_npu"].startswith("2.13.0 installed but cannot load (ImportError: libhccl.so")
    npu = run(["-m", "repro", "--device", "npu"], ledger=ledger, env=broken_npu)
    assert npu.returncode == 2 and "Traceback" not in npu.stderr
    assert npu.stderr.startswith(
        "python -m repro: error: --device npu was requested but no NPU is usable: "
        "torch_npu 2.13.0 installed but cannot load (ImportError: libhccl.so"
    )


@pytest.mark.parametrize(
    ("prog", "argv"),
    [
        ("python -m repro", ["-m", "repro"]),
        ("scriptmodule-hook-repro", ["-c", "from repro.__main__ import console; console()"]),
    ],
    ids=["module", "console-script"],
)
def test_usage_and_errors_name_the_command_typed(tmp_path, prog, argv):
    """argparse's usage and the CLI's own errors share one prefix: the command the user typed."""
    console = ["-c", f"import sys; sys.argv[0] = {prog!r}; " + argv[1]] if argv[0] == "-c" else argv
    usage = run([*console, "--device", "tpu"])
    missing = run(console, ledger=tmp_path / "absent.json")
    assert usage.returncode == 2 and usage.stderr.startswith(f"usage: {prog} ")
    assert f"{prog}: error: argument --device" in usage.stderr
    assert missing.returncode == 2 and missing.stderr.startswith(f"{prog}: error: the ledger ")


def test_minimal_script_exits_1_while_the_bug_is_present():
    code, out = run_here(Path(SCRIPT))
    if bug_expected():
        assert code == 1 and "Could not cast attribute '_is_full_backward_hook'" in out
    else:
        assert code == 0 and out.rstrip().endswith("as on nn.Module")


@pytest.mark.needs_bug(A_BUG)
@pytest.mark.parametrize(
    ("candidate", "code", "says"),
    [("workaround", 0, "OK:"), ("ignored-attributes", 1, "the full backward hook ran 0 times")],
)
def test_minimal_script_judges_behaviour_not_registration(candidate, code, says):
    with applied(candidates_of(BUGS[A_BUG])[candidate]):
        got, out = run_here(Path(SCRIPT))
    assert got == code and says in out


@pytest.mark.slow
@pytest.mark.needs_bug(A_BUG)
def test_minimal_script_passes_with_the_upstream_patch_applied_before_torch_loads():
    proc = run(["-m", "repro.run_patched", f"{A_BUG}:upstream-patch", SCRIPT])
    assert proc.returncode == 0 and "OK:" in proc.stdout


@pytest.mark.slow
def test_minimal_script_cannot_test_without_torch(tmp_path, broken_npu):
    proc = run([SCRIPT], cwd=tmp_path, env=broken_npu)
    assert proc.returncode == 125 and "import torch failed" in proc.stdout


def test_a_departure_no_catalogued_bug_explains_is_drift(repro_main, ledger, monkeypatch):
    """A torch on which ScriptModule forward pre hooks silently never run: no bug in the catalogue says so."""
    forward_pre = torch.nn.Module.register_forward_pre_hook
    monkeypatch.setattr(
        torch.jit.ScriptModule,
        "register_forward_pre_hook",
        lambda self, hook, **kw: forward_pre(self, lambda *a: None, **kw),
    )
    code, out, _ = repro_main(ledger, "--json")
    report = json.loads(out)
    assert code == 1 and report["outcome"] == "different"
    assert "a departure no catalogued bug explains" in report["conclusion"]
    unexplained = [s for s in report["scenarios"] if s["verdict"] not in ("match", "refused") and s["cause"] is None]
    assert "register_forward_pre_hook" in {s["api"] for s in unexplained}
    assert not [s for s in unexplained if s["covered_by"]]  # what the catalogue covers is still explained


@pytest.mark.needs_bug(A_BUG, "global-hooks-root-only", "global-backward-hooks-scripted")
def test_a_per_bug_run_names_another_bugs_departure_without_judging_it(repro_main, ledger):
    """``--bug X``: a departure another bug explains is said to be that bug's, and is neither drift nor a
    status for it."""
    code, out, _ = repro_main(ledger, "--bug", "global-hooks-root-only")
    assert code == 0 and "(explained by global-backward-hooks-scripted (not judged here))" in " ".join(out.split())
    code, out, _ = repro_main(ledger, "--json", "--bug", "global-hooks-root-only")
    report = json.loads(out)
    statuses = {b["id"]: b["status"] for b in report["bugs"]}
    assert statuses["global-backward-hooks-scripted"] == "skipped" and report["drift"] == [] and code == 0


@pytest.mark.parametrize(
    "named", [["copy-shares-training"], ["jit-error-replaces-exception", "deepcopy-drops-subclass"]]
)
def test_each_bug_named_has_its_own_measured_root_cause_in_the_json(repro_main, ledger, named):
    """Schema 6: no bug's cause is special (schema 5 put the first bug's at the top of every report)."""
    code, out, _ = repro_main(ledger, "--json", *(a for bug_id in named for a in ("--bug", bug_id)))
    report = json.loads(out)
    causes = {b["id"]: b["root_cause"] for b in report["bugs"]}
    assert "root_cause" not in report and sorted(i for i, c in causes.items() if c is not None) == sorted(named)
    for bug_id in named:
        assert len(causes[bug_id]) >= 3 and all(isinstance(step, str) and step for step in causes[bug_id])


def test_an_environment_without_the_projects_packages_is_told_which_to_install(tmp_path):
    """Issue 46: a fresh venv with nothing installed got the traceback of `import packaging`."""
    import venv

    venv.create(tmp_path / "bare", with_pip=False)
    bare = tmp_path / "bare" / "bin" / "python"
    proc = run(["-m", "repro"], python=str(bare))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines() == [
        "python -m repro: error: not installed here: torch, packaging (pip install -e .)"
    ]
    for tool in ("check_upstream", "matrix", "device_report"):  # and the tracker: what it needs, not torch
        proc = run(["-m", f"tracker.{tool}", "--help"], python=str(bare))
        assert proc.returncode == 2 and proc.stderr.splitlines() == [
            f"{tool}: error: not installed here: packaging, requests (pip install packaging requests)"
        ], proc.stderr


def test_repro_processes_it_cannot_use_is_one_sentence(monkeypatch, capsys):
    """Issue 46: REPRO_PROCESSES=zero was ignored silently."""
    monkeypatch.setenv("REPRO_PROCESSES", "zero")
    assert main(["--list-bugs"]) == 2
    assert capsys.readouterr().err == (
        "python -m repro: error: REPRO_PROCESSES must be a number of processes, 1 or more, not 'zero'\n"
    )


def test_the_support_table_refuses_slow_as_it_refuses_bug(capsys):
    """Issue 46: it runs every scenario; --slow was accepted and meant nothing."""
    for extra in (["--slow"], ["--bug", next(iter(BUGS))]):
        assert main(["--support-table", *extra]) == 2
        assert "--support-table runs every scenario: it takes only --json and --device" in capsys.readouterr().err


def test_patch_without_torch_says_cannot_be_imported_as_every_command_does(monkeypatch):
    import sysconfig

    from repro.source_checks import installed_torch_root

    for name in [m for m in sys.modules if m == "torch" or m.startswith("torch.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "path", [sysconfig.get_paths()["stdlib"]])  # no site-packages: no torch
    with pytest.raises(FileNotFoundError, match="^torch cannot be imported: it is not installed for this Python$"):
        installed_torch_root()


def test_ctrl_c_dropped_in_a_finalizer_is_delivered_again():
    """Python prints and drops a KeyboardInterrupt raised in a weakref callback or __del__ (torch runs
    many): the CLI's hook delivers SIGINT again, so the run itself is interrupted."""
    import time
    import types

    from repro.cli import _redeliver_ctrl_c

    seen: list[object] = []
    with pytest.raises(KeyboardInterrupt):  # from another thread, a moment later: while this one sleeps
        _redeliver_ctrl_c(seen.append, types.SimpleNamespace(exc_value=KeyboardInterrupt()))
        time.sleep(10)
    other = types.SimpleNamespace(exc_value=ValueError("x"))
    _redeliver_ctrl_c(seen.append, other)
    assert seen == [other]  # anything else goes to the hook it replaced
