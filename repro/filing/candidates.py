"""Candidate fixes for a bug, each put in force and judged by the oracle over the bug's scope.

A bug's candidates live in its catalogue module (``Bug.fixes``). One applied in memory (``apply``) is
judged here, then reverted; one that edits torch's files, the upstream patch included, is served
before torch is imported, so it runs in a process of its own (``python -m repro.run_patched
BUG:CANDIDATE -m repro.filing.scenario_runs --bug BUG``). Each is judged by the default scenarios plus
the bug's whole scope (``slow``: every scenario): ``fix`` when every judged run matches eager; ``loud``
when every run that still departs raises the candidate's own refusal; ``hides the error`` when the
bug's error is gone but runs depart silently; ``incomplete`` otherwise. A refusal TorchScript's design
explains is left out only where torch as installed refuses that run too (``Unpatched``): one a candidate
brings is its own departure.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from repro.catalogue import BUGS, explain
from repro.catalogue.bug import Bug
from repro.catalogue.fixes import Candidate, Edit
from repro.environment import import_torch
from repro.source_checks import installed_torch_root
from repro.vocabulary import NOT_JUDGED, FixVerdict, Verdict


class UnknownCandidate(KeyError):
    """A candidate spec that names no bug with fixes, or no candidate of it (one sentence)."""

    def __str__(self) -> str:
        return str(self.args[0])


def candidates_of(bug: Bug) -> dict[str, Candidate]:
    """``bug``'s candidates by name (the upstream patch as ``upstream-patch``)."""
    return bug.fixes.all()


def specs() -> list[str]:
    """Every candidate as ``run_patched`` names it, ``BUG:NAME`` (``find`` also takes the first bug's bare)."""
    return [f"{bug.id}:{name}" for bug in BUGS.values() for name in candidates_of(bug)]


def find(spec: str) -> tuple[Bug, Candidate]:
    """``BUG:NAME``: no bug's candidates are found by a bare name (no bug is the default)."""
    bug_id, colon, name = spec.rpartition(":")
    if not colon:
        raise UnknownCandidate(f"{spec!r} names no bug: write BUG:NAME")
    bug = BUGS.get(bug_id)
    if bug is None:
        raise UnknownCandidate(f"{spec!r} names no catalogued bug before its ':'")
    found = candidates_of(bug).get(name)
    if found is None:
        raise UnknownCandidate(f"no candidate {name!r}")  # the line names the bug: the user wrote it
    return bug, found


class InstalledSources(Mapping[str, "str | None"]):
    """The installed torch's files, each read when an edit asks for it (None: not there). It lists none:
    an edit names the files it reads."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root or installed_torch_root()

    def __getitem__(self, path: str) -> str | None:
        file = self.root / path
        return file.read_text(encoding="utf-8") if file.is_file() else None

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


@contextmanager
def overlaid(edit: Edit) -> Iterator[None]:
    """The torch files ``edit`` changes, served in place of the installed ones: only before torch is
    imported, so only in a process of its own."""
    from repro.filing.source_import import import_from

    with tempfile.TemporaryDirectory(prefix="repro-candidate-") as directory:
        for path, text in edit(InstalledSources()).items():
            (Path(directory) / path).parent.mkdir(parents=True, exist_ok=True)
            (Path(directory) / path).write_text(text, encoding="utf-8")
        import_from(Path(directory))
        import_torch()
        yield


def applied(candidate: Candidate) -> AbstractContextManager[Any]:
    """``candidate`` in force while the block runs."""
    if candidate.apply is not None:
        return candidate.apply()
    assert candidate.edit is not None, f"{candidate.name} neither applies nor edits"
    return overlaid(candidate.edit)


@dataclass(frozen=True)
class CandidateResult:
    candidate: Candidate
    own_matches: int  # the bug's own runs (its scope) that match eager
    own_total: int
    matches: int
    total: int
    verdict: FixVerdict
    detail: str
    complete: bool = True  # False: judged only on the bug's own runs, which already ruled out a fix

    def tally(self) -> str:
        """``matches/total`` scenario runs, saying where judging stopped early."""
        if self.complete:
            return f"{self.matches}/{self.total} scenario runs"
        return f"{self.matches}/{self.total} of the bug's own scenario runs (judged no further: not a fix)"


def _scenarios(bug: Bug, slow: bool) -> list[Any]:
    from repro.catalogue import select

    return select([], slow, also=(bug.id,)).scenarios


def _start(bug: Bug, candidate: Candidate, device: str, slow: bool = False, beside: bool = False) -> subprocess.Popen:
    """``beside``: this process runs scenarios meanwhile, so the cores are taken; the candidate's process
    then runs its scenarios in one process rather than forking copies of itself."""
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "repro.run_patched",
            f"{bug.id}:{candidate.name}",
            "-m",
            "repro.filing.scenario_runs",
            "--device",
            device,
            "--bug",
            bug.id,
            *["--slow"] * slow,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "REPRO_PROCESSES": "1"} if beside else None,
    )


def start_apart(bug: Bug, device: str, slow: bool = False, beside: bool = False) -> dict[str, subprocess.Popen]:
    """Start ``bug``'s candidates that need a process of their own (``judge_all`` collects them): started
    before this process imports torch, their own imports run on another CPU meanwhile (``beside``: as
    this process runs scenarios too)."""
    apart = [c for c in candidates_of(bug).values() if not c.in_process]
    beside = beside or len(apart) < len(candidates_of(bug))  # candidates judged here run meanwhile
    return {c.name: _start(bug, c, device, slow, beside) for c in apart}


def judge(bug: Bug, candidate: Candidate, device: str) -> CandidateResult:
    """Judge ``candidate`` in a process of its own (which imports torch)."""
    return _classified(bug, Unpatched(bug, device), _collect(candidate, _start(bug, candidate, device)))


@dataclass(frozen=True)
class Runs:
    """What a candidate's scenario runs gave, before judging: ``runs`` as ``--json`` lists them, or
    why there are none (``cannot_judge``)."""

    candidate: Candidate
    runs: list[dict]
    cannot_judge: str = ""
    complete: bool = True  # False: only the bug's own runs were made, and they already ruled out a fix


def _collect(candidate: Candidate, proc: subprocess.Popen) -> Runs:
    stdout, stderr = proc.communicate(timeout=600)
    try:
        runs = json.loads(stdout)
        scenarios, cannot_test = runs["scenarios"], runs["cannot_test"]
    except (ValueError, KeyError, TypeError):
        return Runs(candidate, [], (stderr.strip().splitlines() or ["no output"])[-1])
    return Runs(candidate, [] if cannot_test else scenarios, cannot_test or "")


def _run_here(bug: Bug, candidate: Candidate, device: str, slow: bool = False) -> Runs:
    """``candidate``'s runs in this process, then revert it: the bug's own runs first, and the rest only
    when those could still make a fix or a loud patch (a candidate that fails there is judged by them)."""
    from repro.engine.forked import usable_processes
    from repro.engine.oracle import run_all
    from repro.report import scenario_summary

    scenarios = _scenarios(bug, slow)
    own = [s for s in scenarios if s.apis & set(bug.apis)]
    processes = usable_processes(device)  # forked after the candidate is applied: the copies have it too
    with applied(candidate):  # every run builds its classes anew, under it (models.subject_class)
        first = run_all(device, own, processes, explains=explain)
        if first.cannot_test:
            return Runs(candidate, [], first.cannot_test)
        judged = [scenario_summary(r) for r in first.results]
        # each refusal taken as torch's own here: the baseline can only add departures
        optimistic = classify(bug, candidate, judged, {run_key(r) for r in judged})
        if optimistic.verdict not in (FixVerdict.FIX, FixVerdict.LOUD):
            return Runs(candidate, judged, complete=False)
        rest = run_all(device, [s for s in scenarios if s not in own], processes, explains=explain)
        return Runs(candidate, judged + [scenario_summary(r) for r in rest.results])


Key = tuple[str, str, str, str, str]


def run_key(run: Mapping[str, Any]) -> Key:
    """One scenario run: the same key on patched and unpatched torch."""
    return (run["api"], run["name"], run["model"], run["style"], run["instance"])


def _refused_by_design(run: Mapping[str, Any]) -> bool:
    """A refusal raised, which TorchScript's design (or an undocumented refusal) explains."""
    return run["verdict"] == Verdict.REFUSED and bool(run["scripted_raised"])


class Unpatched:
    """The refusals TorchScript's design explains on torch as installed, for the scenarios whose runs a
    candidate refused so: measured in this process, with no candidate in force, once per scenario."""

    def __init__(self, bug: Bug, device: str, slow: bool = False, known: Sequence[Any] = ()) -> None:
        """``known``: scenario results this process already made on torch as installed (an issue
        body's report), whose scenarios need no second run."""
        from repro.report import scenario_summary

        self.bug, self.device, self.slow = bug, device, slow
        self.measured = {(r.scenario.api, r.scenario.name) for r in known}  # scenarios, by API and name
        self.keys = {run_key(s) for s in map(scenario_summary, known) if _refused_by_design(s)}

    def prefetch(self) -> None:
        """The first scenario of the bug's own APIs measured now, while this process waits on a candidate's:
        what it imports on first use (``torch.export`` brings dynamo, ~1 s) is then off the path at the end."""
        self._measure({(s.api, s.name) for s in _scenarios(self.bug, self.slow) if s.api in self.bug.apis}, 1, 1)

    def refused(self, runs: list[dict], processes: int = 1) -> frozenset[Key]:
        """``processes`` > 1 shares the runs with forked copies: only where no candidate's process runs."""
        self._measure({(r["api"], r["name"]) for r in runs if _refused_by_design(r)}, processes)
        return frozenset(self.keys)

    def _measure(self, wanted: set[tuple[str, str]], processes: int, most: int | None = None) -> None:
        """The scenarios ``wanted`` not measured yet (the first ``most`` of them), run as installed."""
        from repro.engine.oracle import run_all
        from repro.report import scenario_summary

        scenarios = [s for s in _scenarios(self.bug, self.slow) if (s.api, s.name) in wanted - self.measured][:most]
        if scenarios:
            done = run_all(self.device, scenarios, processes, explains=explain)
            summaries = [scenario_summary(r) for r in done.results]
            self.keys |= {run_key(r) for r in summaries if _refused_by_design(r)}
            self.measured |= {(s.api, s.name) for s in scenarios}


def _classified(bug: Bug, unpatched: Unpatched, made: Runs) -> CandidateResult:
    if made.cannot_judge:
        return CandidateResult(made.candidate, 0, 0, 0, 0, FixVerdict.CANNOT_JUDGE, made.cannot_judge)
    result = classify(bug, made.candidate, made.runs, unpatched.refused(made.runs))
    return result if made.complete else replace(result, complete=False)


def classify(
    bug: Bug, candidate: Candidate, scenarios: list[dict], refused_unpatched: Collection[Key]
) -> CandidateResult:
    """Judge a candidate for ``bug`` from the scenario runs made with it in force (as ``--json`` lists
    them). Runs that depart through another catalogued bug, or that TorchScript refuses by design where
    torch as installed refuses them too (``refused_unpatched``: their keys), are left out; every other
    run must match eager, up to a designed difference (``fix``), or raise the candidate's refusal
    (``loud``). None of the bug's own runs judged is never a fix."""
    scenarios = [
        _newly_refused(s) if _refused_by_design(s) and run_key(s) not in refused_unpatched else s for s in scenarios
    ]
    judged = [s for s in scenarios if _judged(bug, s)]
    if not judged:  # 0/0 matching proves nothing (TorchScript disabled, say)
        return CandidateResult(candidate, 0, 0, 0, 0, FixVerdict.CANNOT_JUDGE, "no scenario was judged with it applied")
    own = [s for s in judged if bug.id in s["covered_by"]]
    own_matches = sum(_matches(s) for s in own)
    matches = sum(_matches(s) for s in judged)
    departing = [s for s in judged if not _matches(s)]
    tally = (own_matches, len(own), matches, len(judged))
    if not own:  # the rest matching says nothing about the bug
        return CandidateResult(candidate, *tally, FixVerdict.CANNOT_JUDGE, "none of the bug's own runs was judged")
    if not departing:
        return CandidateResult(candidate, *tally, FixVerdict.FIX, "every judged scenario run matches eager")
    first = departing[0]
    detail = f"{first['api']}: {first['name']} ({first['model']}, {first['style']}): {first['detail']}"
    if candidate.refusal and all(
        s["verdict"] == Verdict.RAISES and candidate.refusal in s["detail"] and bug.id in s["covered_by"]
        for s in departing
    ):  # refusing where the bug does not show breaks what works: never loud
        return CandidateResult(candidate, *tally, FixVerdict.LOUD, f"{len(departing)} runs refuse: {detail}")
    still_raises = any(s["verdict"] == Verdict.RAISES and any(e in s["detail"] for e in bug.errors) for s in own)
    if bug.errors and not still_raises and any(s["verdict"] == Verdict.DIFFERS for s in departing):
        silent = next(s for s in departing if s["verdict"] == Verdict.DIFFERS)
        detail = f"{silent['api']}: {silent['name']} ({silent['model']}, {silent['style']}): {silent['detail']}"
        return CandidateResult(candidate, *tally, FixVerdict.HIDES_THE_ERROR, detail)
    return CandidateResult(candidate, *tally, FixVerdict.INCOMPLETE, detail)


def _newly_refused(run: dict) -> dict:
    """A refusal the candidate brought: a departure, however well TorchScript's design explains it."""
    return {**run, "verdict": Verdict.RAISES, "detail": f"refused only with the candidate: {run['detail']}"}


def _judged(bug: Bug, run: dict) -> bool:
    """Runs another catalogued bug explains are left out, and refusals torch refuses without the
    candidate too (a candidate that leaves each of the bug's runs one has none judged: never a fix)."""
    if run["verdict"] in NOT_JUDGED or run["cause"] not in (None, bug.id):
        return False
    return not _refused_by_design(run)


def _matches(run: dict) -> bool:
    """Eager's behaviour, up to a difference TorchScript's design explains (a child that is compiled
    is a RecursiveScriptModule)."""
    return run["verdict"] in (Verdict.MATCH, Verdict.REFUSED)


def judge_all(
    bug: Bug,
    device: str,
    progress: Callable[[str], None] = lambda line: None,
    apart: dict[str, subprocess.Popen] | None = None,
    slow: bool = False,
    sides: tuple[str, ...] = ("upstream", "user"),
    unpatched: Sequence[Any] = (),
) -> list[CandidateResult]:
    """Judge each of ``bug``'s candidates of ``sides``, saying through ``progress`` which one finished as
    each does. Those applied in memory run here one after another (torch is imported once); the others
    each run in a process of their own meanwhile (``apart``: already started by ``start_apart``). Each is
    judged here once all have run: the baseline (``Unpatched``, seeded with ``unpatched``: results
    already made here on torch as installed) needs torch with none in force."""
    chosen = [c for c in candidates_of(bug).values() if c.side in sides]
    lock = threading.Lock()
    ran: list[str] = []

    def finished(made: Runs) -> Runs:
        with lock:
            ran.append(made.candidate.name)
            progress(f"candidate {len(ran)}/{len(chosen)}: {made.candidate.name}: {len(made.runs)} runs made")
        return made

    started = start_apart(bug, device, slow) if apart is None else apart
    everything = candidates_of(bug)
    baseline = Unpatched(bug, device, slow, unpatched)
    with ThreadPoolExecutor(max_workers=max(1, len(started))) as pool:
        waiting = {
            name: pool.submit(lambda c, p: finished(_collect(c, p)), everything[name], proc)
            for name, proc in started.items()
        }
        try:
            here = {c.name: finished(_run_here(bug, c, device, slow)) for c in chosen if c.in_process}
            for runs in here.values():  # the baseline of these, while the other processes still run
                baseline.refused(runs.runs)
            if waiting and not here:  # this process is idle: the first of the bug's scenarios, as installed
                baseline.prefetch()
            made = {**here, **{name: future.result() for name, future in waiting.items()}}
        except BaseException:  # Ctrl-C: the candidates' processes end now, not when their runs do
            for proc in started.values():
                proc.kill()
            raise
    if waiting:  # the rest of the baseline at once, on every core now that no candidate's process runs
        from repro.engine.forked import usable_processes

        baseline.refused([run for runs in made.values() for run in runs.runs], usable_processes(device))
    return [_classified(bug, baseline, made[c.name]) for c in chosen]
