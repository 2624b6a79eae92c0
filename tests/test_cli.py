"""``python -m repro`` and the minimal script, run as a user runs them, in subprocesses.

Checks that need no fresh interpreter (the JSON content, drift, device resolution) call
``repro.cli.main`` in this process instead: torch is already imported here, which saves
the two seconds each subprocess spends importing it.
"""

from __future__ import annotations

import json

import pytest
import torch

from helpers import ROOT, run, run_json, write_ledger
from repro.cli import main
from repro.ledger import release_key

SCRIPT = str(ROOT / "repro" / "full_backward_hook_bug.py")
BUG_APIS = {"register_full_backward_hook", "register_backward_hook"}


@pytest.fixture
def ledger(tmp_path):
    return write_ledger(tmp_path / "ledger.json")


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


def fake_broken_npu(tmp_path) -> dict[str, str]:
    """A torch_npu that torch's backend autoload finds and fails to load as the real one does without CANN."""
    site = tmp_path / "site"
    (site / "torch_npu").mkdir(parents=True)
    (site / "torch_npu" / "__init__.py").write_text(
        "raise ImportError('libhccl.so: cannot open shared object file: No such file or directory')\n")
    info = site / "torch_npu-2.13.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: torch_npu\nVersion: 2.13.0\n")
    (info / "entry_points.txt").write_text("[torch.backends]\ntorch_npu = torch_npu:_autoload\n")
    return {"PYTHONPATH": f"{ROOT}:{site}"}


@pytest.fixture(params=["simulated", "torch_npu-2.13.0"])
def broken_npu(request, tmp_path):
    """torch_npu installed without its CANN runtime: the simulation, and the real wheel where installed."""
    if request.param == "simulated":
        return fake_broken_npu(tmp_path)
    if not (REAL_TORCH_NPU / "torch_npu").is_dir():
        pytest.skip("needs `pip install --no-deps --target .tools/torch_npu torch_npu==2.13.0` (.ci/run does it)")
    return {"PYTHONPATH": f"{ROOT}:{REAL_TORCH_NPU}"}


def test_json_report_shows_the_bug_next_to_working_apis(repro_main, ledger):
    code, out, _ = repro_main(ledger, "--json")
    report = json.loads(out)
    assert code == 0
    assert report["schema"] == 1 and report["outcome"] == "present" and report["bug_present"] is True
    assert report["torch_version"] == torch.__version__ and report["device"] == "cpu"
    assert report["expected"]["outcome"] == "present" and report["matches_expectation"] is True
    verdicts = {(s["api"], s["verdict"]) for s in report["scenarios"]}
    assert {api for api, v in verdicts if v == "raises"} == BUG_APIS
    assert {api for api, v in verdicts if v != "match"} == BUG_APIS
    assert all("_is_full_backward_hook" in s["detail"] for s in report["scenarios"] if s["bug"])
    assert {s["style"] for s in report["scenarios"]} == {"script_method", "plain_forward"}
    assert report["root_cause"]["flag_cpp_type"] == "NoneType" and len(report["root_cause"]["evidence"]) == 3


def test_text_report_has_header_table_and_conclusion(ledger):
    proc = run(["-m", "repro"], ledger=ledger)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"torch {torch.__version__} | Python") and "torch_npu: not installed" in lines[0]
    assert sum("deprecated" in line for line in proc.stdout.splitlines()) <= 1  # warnings once
    assert any(line.startswith("register_full_backward_hook") and line.endswith("raises") for line in lines)
    assert lines[-1].startswith("The bug is present") and "as the ledger expects" in lines[-1]
    assert proc.stderr == ""


def test_ledger_claiming_a_fix_is_drift(repro_main, tmp_path):
    code, out, _ = repro_main(write_ledger(tmp_path / "l.json", fixed_in=release_key(torch.__version__)), "--json")
    report = json.loads(out)
    assert code == 1 and report["matches_expectation"] is False
    assert report["drift"][0].startswith("outcome: expected fixed")


def test_fixed_torch_is_drift_while_the_ledger_says_present(ledger):
    # Once the ledger follows, the same run is exit 0: test_patch_applies_and_every_scenario_matches_eager.
    code, report = run_json(["-m", "repro.run_patched", "upstream-patch", "-m", "repro"], ledger=ledger)
    assert (code, report["outcome"], report["bug_present"]) == (1, "fixed", False)
    assert any("expected raises, got match" in d for d in report["drift"])


def test_silenced_error_is_still_the_bug(ledger):
    code, report = run_json(["-m", "repro.run_patched", "ignored-attributes", "-m", "repro"], ledger=ledger)
    assert report["outcome"] == "present" and code == 1  # drift: raises became differs
    assert {s["verdict"] for s in report["scenarios"] if s["bug"]} == {"differs"}


@pytest.mark.parametrize(
    ("ledger_text", "message"),
    [("{not json", "is not valid JSON"), ('{"fixed_in": "2.x", "releases": {}}', "invalid fixed_in"),
     ("[]", "no 'releases' object")],
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


def test_torchscript_disabled_cannot_test(ledger):
    code, report = run_json(["-m", "repro"], ledger=ledger, env={"PYTORCH_JIT": "0"})
    assert (code, report["outcome"], report["bug_present"]) == (2, "cannot-test", None)
    assert "TorchScript is disabled" in report["cannot_test_reason"]
    assert run([SCRIPT], env={"PYTORCH_JIT": "0"}).returncode == 125


def test_broken_torch_npu_still_runs_on_cpu(ledger, broken_npu):
    plain = run(["-c", "import torch"], env=broken_npu)
    assert plain.returncode == 1 and "Failed to load the backend extension: torch_npu" in plain.stderr
    code, report = run_json(["-m", "repro"], ledger=ledger, env=broken_npu)
    assert code == 0 and report["device"] == "cpu"
    assert report["torch_npu"].startswith("2.13.0 installed but cannot load (ImportError: libhccl.so")
    npu = run(["-m", "repro", "--device", "npu"], ledger=ledger, env=broken_npu)
    assert npu.returncode == 2 and "cannot load" in npu.stderr and "Traceback" not in npu.stderr


def test_minimal_script_exits_1_while_the_bug_is_present(tmp_path):
    proc = run([SCRIPT], cwd=tmp_path, env={"PYTHONPATH": ""})
    assert proc.returncode == 1
    assert "Could not cast attribute '_is_full_backward_hook'" in proc.stdout


@pytest.mark.parametrize(("candidate", "code", "says"),
                         [("upstream-patch", 0, "OK:"), ("ignored-attributes", 1, "hook misbehaved")])
def test_minimal_script_judges_behaviour_not_registration(candidate, code, says):
    proc = run(["-m", "repro.run_patched", candidate, SCRIPT])
    assert proc.returncode == code and says in proc.stdout


def test_minimal_script_cannot_test_without_torch(tmp_path, broken_npu):
    proc = run([SCRIPT], cwd=tmp_path, env=broken_npu)
    assert proc.returncode == 125 and "import torch failed" in proc.stdout
