"""Candidate fixes, each applied in memory in a process of its own, and judged by the oracle.

``apply`` runs before the candidate's process imports torch (``python -m repro.run_patched``)
and imports torch itself. A candidate counts as a fix only when every scenario then matches
eager; one that lets registration succeed while hooks still misbehave only hides the error.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from repro.environment import import_torch
from repro.ledger import ORIGINAL
from repro.source_checks import FLAG, installed_sources

FULL_HOOK_CALLED = "register_full_backward_hook: called with grad_input and grad_output"


def add_flag_to_ignored_attributes() -> None:
    """(a) The one-line fix most people propose: keep the flag out of the C++ class."""
    import_torch()
    import torch.jit._recursive

    if FLAG not in torch.jit._recursive.ignored_attributes:
        torch.jit._recursive.ignored_attributes.append(FLAG)


def declare_jit_ignored_attributes() -> None:
    """(b) User side: each ScriptModule subclass declares ``__jit_ignored_attributes__``; declared on
    the base class here, so that the fresh classes of first-instance runs inherit it too."""
    import torch

    import_torch()
    torch.jit.ScriptModule.__jit_ignored_attributes__ = [FLAG]


def apply_upstream_patch() -> None:
    """(c) The proposed upstream diff (``--patch``), loaded from generated source files."""
    from repro.filing.source_import import import_from
    from repro.filing.upstream_patch import patched_sources

    directory = Path(tempfile.mkdtemp(prefix="repro-upstream-patch-"))
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    for path, text in patched_sources(installed_sources()).items():
        (directory / path).parent.mkdir(parents=True, exist_ok=True)
        (directory / path).write_text(text, encoding="utf-8")
    import_from(directory)
    import_torch()


def use_workaround() -> None:
    """(d) User side: call ``repro.workaround`` instead of the two methods."""
    import_torch()
    import torch

    from repro import workaround

    torch.jit.ScriptModule.register_full_backward_hook = (
        lambda self, hook, prepend=False: workaround.register_full_backward_hook(self, hook, prepend=prepend))
    torch.jit.ScriptModule.register_backward_hook = workaround.register_backward_hook


@dataclass(frozen=True)
class Candidate:
    name: str
    side: str  # "upstream" or "user"
    summary: str
    apply: Callable[[], None]


CANDIDATES = {c.name: c for c in (
    Candidate("ignored-attributes", "upstream", "add the flag to torch.jit._recursive.ignored_attributes",
              add_flag_to_ignored_attributes),
    Candidate("jit-ignored-attributes", "user", "declare __jit_ignored_attributes__ = ['_is_full_backward_hook']",
              declare_jit_ignored_attributes),
    Candidate("upstream-patch", "upstream", "ignored_attributes plus ScriptModule.__setattr__ keeping the flag "
              "on the wrapper (python -m repro --patch)", apply_upstream_patch),
    Candidate("workaround", "user", "register through a helper that sets the flag on the Python wrapper first",
              use_workaround),
)}


@dataclass(frozen=True)
class CandidateResult:
    candidate: Candidate
    registers: bool | None  # the bug's registrations no longer raise
    hook_fires: bool | None  # the full backward hook is called as on eager
    matches: int
    total: int
    verdict: str  # "fix" | "hides the error" | "no effect" | "cannot judge"
    detail: str


def judge(candidate: Candidate, device: str) -> CandidateResult:
    """Run every scenario with ``candidate`` applied, in a subprocess of its own."""
    proc = subprocess.run(
        [sys.executable, "-m", "repro.run_patched", candidate.name, "-m", "repro", "--json", "--device", device],
        capture_output=True, text=True, timeout=600,
    )
    try:
        scenarios = json.loads(proc.stdout)["scenarios"]
    except (ValueError, KeyError):
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return CandidateResult(candidate, None, None, 0, 0, "cannot judge", last)
    return classify(candidate, scenarios)


def classify(candidate: Candidate, scenarios: list[dict]) -> CandidateResult:
    """Judge a candidate from the scenarios of ``python -m repro --json`` run with it applied.

    Runs that depart through another catalogued bug, or that TorchScript refuses by design, are left
    out: a candidate for this bug is judged by every other scenario run, which must all match eager.
    Nothing judged is never a fix."""
    judged = [s for s in scenarios if s["verdict"] not in ("unavailable", "refused") and s["cause"] in (None, ORIGINAL)]
    if not judged:  # 0/0 matching proves nothing (TorchScript disabled, say)
        return CandidateResult(candidate, None, None, 0, 0, "cannot judge", "no scenario was judged with it applied")
    bug = [s for s in scenarios if ORIGINAL in s["covered_by"]]
    registers = all(s["verdict"] != "raises" for s in bug)
    hook_fires = all(s["verdict"] == "match" for s in bug if f"{s['api']}: {s['name']}" == FULL_HOOK_CALLED)
    matches = sum(s["verdict"] == "match" for s in judged)
    if matches == len(judged):
        verdict, detail = "fix", "every scenario matches eager except where another catalogued bug shows"
    elif registers:
        departing = next(s for s in judged if s["verdict"] != "match")
        verdict, detail = "hides the error", f"{departing['api']}: {departing['name']}: {departing['detail']}"
    else:
        verdict, detail = "no effect", next(s["detail"] for s in bug if s["verdict"] == "raises")
    return CandidateResult(candidate, registers, hook_fires, matches, len(judged), verdict, detail)


def judge_all(device: str, progress: Callable[[str], None] = lambda line: None) -> list[CandidateResult]:
    """Judge every candidate, one process per CPU at a time (each process imports torch), saying
    through ``progress`` which one finished as each does: the whole takes several seconds."""
    with ThreadPoolExecutor(max_workers=min(len(CANDIDATES), os.cpu_count() or 1)) as pool:
        futures = {pool.submit(judge, c, device): c for c in CANDIDATES.values()}
        for done, future in enumerate(as_completed(futures), start=1):
            r = future.result()
            progress(f"candidate {done}/{len(futures)}: {r.candidate.name}: {r.verdict} ({r.matches}/{r.total})")
        return [future.result() for future in futures]
