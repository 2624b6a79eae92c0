"""Material for an upstream issue, gathered on this machine: the minimal script's source and
real output, the traceback, and the versions block PyTorch's bug template asks for."""

from __future__ import annotations

import os
import subprocess
import sys
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path

from repro.filing.candidates import CandidateResult, judge_all

SCRIPT = Path(__file__).parents[1] / "full_backward_hook_bug.py"
UPSTREAM_ISSUE = "pytorch/pytorch#181473"
DOWNSTREAM_TEST = "Ascend/pytorch test/test_jit_api.py::TestScriptModuleHooks::test_register_full_backward_hook_raises"


@dataclass(frozen=True)
class Filing:
    script_source: str
    script_output: str
    script_exit: int
    traceback: str
    versions: str
    patch: str  # the proposed upstream diff for this torch, or why there is none
    candidates: list[CandidateResult]


def gather(torch_npu_status: str, device: str) -> Filing:
    """Everything the issue body shows; the minimal script runs while the candidates are judged."""
    with subprocess.Popen([sys.executable, str(SCRIPT)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"}) as script:
        candidates = judge_all(device)
        output, _ = script.communicate(timeout=300)
    return Filing(SCRIPT.read_text(encoding="utf-8"), output.strip(), script.returncode,
                  registration_traceback(), versions(torch_npu_status), _patch(), candidates)


def _patch() -> str:
    from repro.filing.upstream_patch import PatchError, proposed_diff

    try:
        return proposed_diff()
    except PatchError as problem:
        return f"(no patch for this torch: {problem})"


def registration_traceback() -> str:
    """The full traceback of the failing registration, or a line saying it did not fail."""
    from repro.engine.models import ScriptMethodNet

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ScriptMethodNet().register_full_backward_hook(lambda module, grad_input, grad_output: None)
    except Exception:
        return traceback.format_exc().strip()
    return "register_full_backward_hook did not raise on this torch."


def versions(torch_npu_status: str) -> str:
    """``torch.utils.collect_env`` output, plus torch_npu and CANN, which it does not cover."""
    from torch.utils.collect_env import get_pretty_env_info

    text = get_pretty_env_info()
    if torch_npu_status != "not installed":
        text += f"\n\ntorch_npu: {torch_npu_status}\nCANN: {cann_version()}"
    return text


def cann_version() -> str:
    bases = [os.environ.get("ASCEND_TOOLKIT_HOME"), os.environ.get("ASCEND_HOME_PATH"),
             "/usr/local/Ascend/ascend-toolkit/latest"]
    for base in filter(None, bases):
        for info in [*Path(base).glob("*/ascend_toolkit_install.info"), Path(base) / "version.cfg"]:
            if info.is_file():
                for line in info.read_text(errors="replace").splitlines():
                    if line.strip().startswith("version="):
                        return line.split("=", 1)[1].strip()
    return "not found"
