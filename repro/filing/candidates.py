"""Candidate fixes, each applied in memory and judged by the oracle.

``apply`` is a context manager that imports torch itself: the fix is in force inside the block.
Candidates that patch Python objects are applied and reverted one after another in this process;
the upstream patch replaces torch's source files, which only works before torch is imported, so
it runs in a process of its own (``python -m repro.run_patched CANDIDATE -m
repro.filing.scenario_runs``). A candidate counts as a fix only when every scenario judged (the
default ones; ``slow``: all) then matches eager; one that lets registration succeed while hooks
still misbehave only hides the error.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

from repro.catalogue import WITH_FIXES
from repro.environment import import_torch
from repro.source_checks import FLAG, installed_sources
from repro.vocabulary import Verdict

FULL_HOOK_CALLED = "register_full_backward_hook: called with grad_input and grad_output"


@contextmanager
def add_flag_to_ignored_attributes() -> Iterator[None]:
    """(a) The one-line fix most people propose: keep the flag out of the C++ class."""
    import_torch()
    import torch.jit._recursive

    ignored = torch.jit._recursive.ignored_attributes
    added = FLAG not in ignored
    if added:
        ignored.append(FLAG)
    try:
        yield
    finally:
        if added:
            ignored.remove(FLAG)


@contextmanager
def declare_jit_ignored_attributes() -> Iterator[None]:
    """(b) User side: each ScriptModule subclass declares ``__jit_ignored_attributes__``; declared on
    the base class here, so that the fresh classes of first-instance runs inherit it too."""
    import_torch()
    import torch

    from repro.workaround import replaced

    with replaced(torch.jit.ScriptModule, "__jit_ignored_attributes__", [FLAG]):
        yield


@contextmanager
def apply_upstream_patch() -> Iterator[None]:
    """(c) The proposed upstream diff (``--patch``), loaded from generated source files: only before
    torch is imported, so only in a process of its own (``python -m repro.run_patched``)."""
    from repro.filing.source_import import import_from
    from repro.filing.upstream_patch import patched_sources

    with tempfile.TemporaryDirectory(prefix="repro-upstream-patch-") as directory:
        for path, text in patched_sources(installed_sources()).items():
            (Path(directory) / path).parent.mkdir(parents=True, exist_ok=True)
            (Path(directory) / path).write_text(text, encoding="utf-8")
        import_from(Path(directory))
        import_torch()
        yield


@contextmanager
def use_workaround() -> Iterator[None]:
    """(d) User side: call ``repro.workaround`` instead of the two methods."""
    import_torch()
    from repro import workaround

    with workaround.routed("register_full_backward_hook", "register_backward_hook"):
        yield


@dataclass(frozen=True)
class Candidate:
    name: str
    side: str  # "upstream" or "user"
    summary: str
    apply: Callable[[], AbstractContextManager[None]]  # the fix, in force while the block runs
    in_process: bool = True  # can be applied and reverted after torch is imported


CANDIDATES = {
    c.name: c
    for c in (
        Candidate(
            "ignored-attributes",
            "upstream",
            "add the flag to torch.jit._recursive.ignored_attributes",
            add_flag_to_ignored_attributes,
        ),
        Candidate(
            "jit-ignored-attributes",
            "user",
            "declare __jit_ignored_attributes__ = ['_is_full_backward_hook']",
            declare_jit_ignored_attributes,
        ),
        Candidate(
            "upstream-patch",
            "upstream",
            "ignored_attributes plus ScriptModule.__setattr__ keeping the flag "
            "on the wrapper (python -m repro --patch)",
            apply_upstream_patch,
            in_process=False,
        ),
        Candidate(
            "workaround",
            "user",
            "register through a helper that sets the flag on the Python wrapper first",
            use_workaround,
        ),
    )
}


@dataclass(frozen=True)
class CandidateResult:
    candidate: Candidate
    registers: bool | None  # the bug's registrations no longer raise
    hook_fires: bool | None  # the full backward hook is called as on eager
    matches: int
    total: int
    verdict: str  # "fix" | "hides the error" | "no effect" | "cannot judge"
    detail: str
    complete: bool = True  # False: judged only on the bug's own runs, which already ruled out a fix

    def tally(self) -> str:
        """``matches/total`` scenario runs, saying where judging stopped early."""
        if self.complete:
            return f"{self.matches}/{self.total} scenario runs"
        return f"{self.matches}/{self.total} of the bug's own scenario runs (judged no further: not a fix)"


def start_apart(device: str, slow: bool = False) -> dict[str, subprocess.Popen]:
    """Start the candidates that need a process of their own (``judge_all`` collects them): started
    before this process imports torch, their own imports run on another CPU meanwhile."""
    return {c.name: _start(c, device, slow) for c in CANDIDATES.values() if not c.in_process}


def _start(candidate: Candidate, device: str, slow: bool = False) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "repro.run_patched",
            candidate.name,
            "-m",
            "repro.filing.scenario_runs",
            "--device",
            device,
            *["--slow"] * slow,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def judge(candidate: Candidate, device: str) -> CandidateResult:
    """Run the default scenarios with ``candidate`` applied, in a subprocess of its own (which imports torch)."""
    return _collect(candidate, _start(candidate, device))


def _collect_finished(
    finished: Callable[[CandidateResult], CandidateResult], candidate: Candidate, proc: subprocess.Popen
) -> CandidateResult:
    return finished(_collect(candidate, proc))


def _collect(candidate: Candidate, proc: subprocess.Popen) -> CandidateResult:
    stdout, stderr = proc.communicate(timeout=600)
    try:
        runs = json.loads(stdout)
        scenarios, cannot_test = runs["scenarios"], runs["cannot_test"]
    except (ValueError, KeyError, TypeError):
        last = (stderr.strip().splitlines() or ["no output"])[-1]
        return CandidateResult(candidate, None, None, 0, 0, "cannot judge", last)
    if cannot_test:
        return CandidateResult(candidate, None, None, 0, 0, "cannot judge", cannot_test)
    return classify(candidate, scenarios)


def judge_here(candidate: Candidate, device: str, slow: bool = False) -> CandidateResult:
    """Run the default scenarios (``slow``: all) with ``candidate`` applied in this process, then revert
    it: the original bug's own runs first, and the rest only when those all match eager (a fix must
    match every run; a candidate that fails there is judged by them)."""
    from repro.catalogue import cause_of, select
    from repro.engine.oracle import run_all
    from repro.report import scenario_summary

    scenarios = select([], slow).scenarios
    own = [s for s in scenarios if s.apis & set(WITH_FIXES.apis)]
    with candidate.apply():  # every run builds its classes anew, under it (models.subject_class)
        first = run_all(device, own, explains=cause_of)
        if first.cannot_test:
            return CandidateResult(candidate, None, None, 0, 0, "cannot judge", first.cannot_test)
        judged = [scenario_summary(r) for r in first.results]
        result = classify(candidate, judged)
        if result.verdict != "fix":
            return replace(result, complete=False)
        rest = run_all(device, [s for s in scenarios if s not in own], explains=cause_of)
        return classify(candidate, judged + [scenario_summary(r) for r in rest.results])


def classify(candidate: Candidate, scenarios: list[dict]) -> CandidateResult:
    """Judge a candidate from the scenario runs made with it applied (listed as ``--json`` lists them).

    Runs that depart through another catalogued bug, or that TorchScript refuses by design, are left
    out: a candidate for this bug is judged by every other scenario run, which must all match eager.
    Nothing judged is never a fix."""
    judged = [
        s
        for s in scenarios
        if s["verdict"] not in (Verdict.UNAVAILABLE, Verdict.NOT_RUN, Verdict.REFUSED)
        and s["cause"] in (None, WITH_FIXES.id)
    ]
    if not judged:  # 0/0 matching proves nothing (TorchScript disabled, say)
        return CandidateResult(candidate, None, None, 0, 0, "cannot judge", "no scenario was judged with it applied")
    bug = [s for s in scenarios if WITH_FIXES.id in s["covered_by"]]
    registers = all(s["verdict"] != Verdict.RAISES for s in bug)
    hook_fires = all(s["verdict"] == Verdict.MATCH for s in bug if f"{s['api']}: {s['name']}" == FULL_HOOK_CALLED)
    matches = sum(s["verdict"] == Verdict.MATCH for s in judged)
    if matches == len(judged):
        verdict, detail = "fix", "every scenario matches eager except where another catalogued bug shows"
    elif registers:
        departing = next(s for s in judged if s["verdict"] != Verdict.MATCH)
        verdict, detail = "hides the error", f"{departing['api']}: {departing['name']}: {departing['detail']}"
    else:
        verdict, detail = "no effect", next(s["detail"] for s in bug if s["verdict"] == Verdict.RAISES)
    return CandidateResult(candidate, registers, hook_fires, matches, len(judged), verdict, detail)


def judge_all(
    device: str,
    progress: Callable[[str], None] = lambda line: None,
    apart: dict[str, subprocess.Popen] | None = None,
    slow: bool = False,
    sides: tuple[str, ...] = ("upstream", "user"),
) -> list[CandidateResult]:
    """Judge every candidate of ``sides``, saying through ``progress`` which one finished as each does.
    Those that can be reverted run here one after another (torch is imported once); the others each
    run in a process of their own meanwhile (``apart``: already started by ``start_apart``). ``slow``
    judges each on every scenario, not only the default ones."""
    chosen = [c for c in CANDIDATES.values() if c.side in sides]
    lock = threading.Lock()
    done: list[CandidateResult] = []

    def finished(result: CandidateResult) -> CandidateResult:
        with lock:
            done.append(result)
            progress(
                f"candidate {len(done)}/{len(chosen)}: {result.candidate.name}: {result.verdict} "
                f"({result.matches}/{result.total})"
            )
        return result

    started = start_apart(device, slow) if apart is None else apart
    with ThreadPoolExecutor(max_workers=max(1, len(started))) as pool:
        waiting = {
            name: pool.submit(partial(_collect_finished, finished, CANDIDATES[name], started[name])) for name in started
        }
        here = {c.name: finished(judge_here(c, device, slow)) for c in chosen if c.in_process}
        results = {**here, **{name: future.result() for name, future in waiting.items()}}
    return [results[c.name] for c in chosen]
