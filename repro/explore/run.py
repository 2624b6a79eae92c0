"""The exploration: Hypothesis draws cases for a time budget, each run in a forked worker that is
replaced every ``REPLACE_EVERY`` cases (TorchScript never frees a class it compiled: memory grows by
about 2 MB a case); then each unexplained departure is shrunk with Hypothesis (``find`` over
reductions of the case that found it: steps, members, children, ops and sizes dropped or made smaller)
and written as a standalone script.

The search and the shrinking are Hypothesis'; nothing here draws at random or shrinks by hand. A seed
means the same run with the same pinned Hypothesis (``hypothesis==6.170.27``).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import resource
import signal
import tempfile
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from random import Random
from typing import Any, TypeVar

from hypothesis import HealthCheck, Phase, Verbosity, find, given, settings
from hypothesis import seed as seeded
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

from repro.engine.oracle import Explains
from repro.explore import corpus, loading
from repro.explore.case import Case, Twin, run_twin
from repro.explore.classify import Explanation, Finding, Kind, apis_of, compare
from repro.explore.generate import Level, ModelSpec, Op, consistent, specs
from repro.explore.steps import Assign, Hook, Step, steps
from repro.traits import Traits
from repro.vocabulary import WorkaroundVerdict

T = TypeVar("T")
Apply = Callable[[], AbstractContextManager[Any]]  # puts a workaround in force around a twin's run
REPLACE_EVERY = 40  # cases per worker before a fresh fork replaces it
PATIENCE_S = 30.0  # a worker silent this long on one case is stuck: the case runs here instead
SHRINK_EXAMPLES = 60  # reductions tried per unexplained departure
SEARCH_SHARE = 0.6  # of the budget, when departures are shrunk in the rest


def cases() -> st.SearchStrategy[Case]:
    return st.builds(Case, specs(), steps(), st.booleans())


@dataclass
class Costs:
    """What the cases a worker answered cost: seconds running each twin (building it, where TorchScript
    compiles the twin under test, and its steps), and the largest resident memory a worker reached."""

    scripted_s: float = 0.0
    eager_s: float = 0.0
    worker_rss_mb: float = 0.0  # the largest of any worker (each is replaced every REPLACE_EVERY cases)

    def add(self, other: Costs) -> None:
        self.scripted_s += other.scripted_s
        self.eager_s += other.eager_s
        self.worker_rss_mb = max(self.worker_rss_mb, other.worker_rss_mb)

    @property
    def torchscript_share(self) -> float:
        """The twin under test's time beyond its eager twin's, as a share of both twins' time: what
        TorchScript (compiling the classes, running compiled code) adds to a case."""
        both = self.scripted_s + self.eager_s
        return max(self.scripted_s - self.eager_s, 0.0) / both if both else 0.0


@dataclass
class Found:
    """One departure (by ``Finding.signature``): the first case that showed it, its index, how often."""

    finding: Finding
    case: Case
    first: int
    count: int = 1
    shrunk: tuple[Case, Finding] | None = None  # the smallest case Hypothesis reached, and its finding
    without: bool = False  # a workaround in force, and the case departs the same without it: not its doing

    @property
    def unexplained(self) -> bool:
        return self.finding.explanation is Explanation.UNEXPLAINED

    def example(self) -> tuple[Case, Finding]:
        """The case to show: the shrunk one where there is one."""
        return self.shrunk or (self.case, self.finding)


@dataclass
class Exploration:
    seed: int
    budget: float
    cases: int = 0
    seconds: float = 0.0
    found: dict[str, Found] = field(default_factory=dict)
    drawn: dict[str, int] = field(default_factory=dict)  # how often each kind of step was drawn
    fallbacks: int = 0  # cases run in this process because a worker hung or died
    costs: Costs = field(default_factory=Costs)  # what the cases cost, as the workers measured
    within: str = ""  # what the models were kept to (a bug's reach, by its id), or "" for every model
    workaround: str = ""  # the workaround of that bug in force around every twin's run, or ""
    covered: dict[str, int] = field(default_factory=dict)  # per API (as the support table names it), cases
    replayed: int = 0  # of the cases, those a database kept from an earlier run (run first)

    def unexplained(self) -> list[Found]:
        return [f for f in self.found.values() if f.unexplained]

    def against_workaround(self) -> list[Found]:
        """With a workaround in force, the departures that are its (judged as a proof judges one): one
        its bug still explains, or one nothing explains; not what another bug explains, or TorchScript
        refuses, nor an unexplained one its case shows without the workaround too (an open finding
        the workaround does not touch)."""
        if not self.workaround:
            return []
        return [f for f in self.found.values() if (f.unexplained and not f.without) or f.finding.cause == self.within]

    def shown(self) -> list[Found]:
        """The departures a report shows as scripts (shrunk first): each unexplained one, and each the
        workaround in force answers for, in the order found."""
        return sorted(
            {id(f): f for f in [*self.unexplained(), *self.against_workaround()]}.values(), key=lambda f: f.first
        )

    def workaround_verdict(self) -> WorkaroundVerdict:
        """The workaround's verdict: silently wrong where a departure it answers for is silent, loud
        where each is loud, else it holds."""
        failing = [f.finding for f in self.against_workaround()]
        if any(finding.kind is Kind.SILENT for finding in failing):
            return WorkaroundVerdict.SILENTLY_WRONG
        return WorkaroundVerdict.LOUD if failing else WorkaroundVerdict.HOLDS

    def space(self) -> str:
        """What the verdict held on, in the words the ledger's proofs use."""
        replayed = f" ({self.replayed} of them replayed from a database of earlier departures)" if self.replayed else ""
        return (
            f"{self.cases} generated models of depth <=3 in the reach of {self.within}{replayed}, seed {self.seed}, "
            f"budget {self.budget:.0f} s"
        )


def _both(case: Case, apply: Apply = contextlib.nullcontext) -> tuple[Twin, Twin, Costs]:
    """Both twins, each run with ``apply``'s workaround in force (as a proof runs each side), and what
    each took; the memory is the caller's to read (a worker's own)."""
    started = time.perf_counter()
    with apply():
        scripted = run_twin(case, True)
    middle = time.perf_counter()
    with apply():
        eager = run_twin(case, False)
    return scripted, eager, Costs(middle - started, time.perf_counter() - middle)


class Workers:
    """Cases run in a forked process, forked anew every ``REPLACE_EVERY`` cases. A fork copies one
    thread: a lock another thread held at that moment is never released in the copy, which then hangs
    (seen under pytest-xdist). A copy that does not answer within ``PATIENCE_S``, or dies, is killed
    and the case runs in this process instead: a worker only ever saves memory, it never loses a case."""

    def __init__(self, patience: float = PATIENCE_S, apply: Apply = contextlib.nullcontext) -> None:
        self.patience = patience
        self.apply = apply
        self.process: Any = None
        self.connection: Any = None
        self.done = 0
        self.fallbacks = 0  # cases run here because a worker hung or died
        self.costs = Costs()  # of the cases the workers answered

    def run(self, case: Case) -> tuple[Twin, Twin]:
        if self.process is None or self.done >= REPLACE_EVERY:
            self._replace()
        try:
            self.connection.send(case)
            if self.connection.poll(self.patience):
                scripted, eager, costs = self.connection.recv()
                self.done += 1
                self.costs.add(costs)
                return scripted, eager
        except (EOFError, OSError):
            pass
        self.close()
        self.fallbacks += 1
        return _both(case, self.apply)[:2]

    def _replace(self) -> None:
        self.close()
        context = multiprocessing.get_context("fork")
        mine, theirs = context.Pipe()
        self.process = context.Process(target=_serve, args=(theirs, self.apply), daemon=True)
        self.process.start()
        theirs.close()
        self.connection, self.done = mine, 0

    def close(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.join()
            self.connection.close()
        self.process = None


def _serve(connection: Any, apply: Apply = contextlib.nullcontext) -> None:
    """The worker: a case in, both twins out, until the pipe closes. Ctrl-C is the parent's to answer
    (it kills this process): a traceback from here would be a second answer. What torch prints or
    logs while a case runs (export logs whole graphs when a guard is data-dependent) is not the
    user's output: the worker's standard output and error go to /dev/null; results come back by pipe."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    nowhere = os.open(os.devnull, os.O_WRONLY)
    os.dup2(nowhere, 1)
    os.dup2(nowhere, 2)
    import torch

    # GNU OpenMP's thread pool does not survive a fork: a copy of a process that ran a parallel op
    # hangs in its first one. With one thread, torch runs every op inline and never enters the pool.
    torch.set_num_threads(1)
    while True:
        try:
            case = connection.recv()
        except EOFError:
            return
        scripted, eager, costs = _both(case, apply)
        costs.worker_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux
        connection.send((scripted, eager, costs))


class _Spent(Exception):
    """The budget is spent: the search ends."""


def explore(
    budget: float,
    seed: int,
    explains: Explains,
    progress: Callable[[Exploration], None] = lambda exploration: None,
    shrink: bool = True,
    within: tuple[str, Callable[[Traits], bool]] = ("", lambda traits: True),
    workaround: tuple[str, Apply] = ("", contextlib.nullcontext),
    database: Path | None = None,
) -> Exploration:
    """Cases drawn from ``seed`` for ``budget`` seconds, each compared twin by twin; each departure a
    report shows as a script (``Exploration.shown``) then shrunk (within ``SHRINK_EXAMPLES``
    reductions). ``within`` names a predicate over a model's traits (a bug's reach, handed in) that
    every case's model, shrunk ones too, holds; ``workaround`` names the workaround put in force around
    every twin's run (its bug's). With a ``database`` folder, the cases it keeps
    (``repro.explore.corpus``) run first, and it then keeps one case per departure found (the shrunk one
    where there is one)."""
    exploration = Exploration(seed, budget, within=within[0], workaround=workaround[0])
    kept = within[1]
    loading.use(Path(tempfile.mkdtemp(prefix="repro-explore-")))  # the workers inherit it
    workers = Workers(apply=workaround[1])
    baseline = Workers()  # with a workaround: an unexplained departure's case again without it (forks when asked)
    started = time.monotonic()
    searching = budget * (SEARCH_SHARE if shrink else 1.0)

    def observe(case: Case) -> None:
        if time.monotonic() - started > searching:
            raise _Spent
        exploration.cases += 1
        for step in case.steps:
            exploration.drawn[type(step).__name__] = exploration.drawn.get(type(step).__name__, 0) + 1
        for api in apis_of(case):
            exploration.covered[api] = exploration.covered.get(api, 0) + 1
        finding = compare(case, *workers.run(case), explains)
        if finding is not None:
            seen = exploration.found.get(finding.signature)
            if seen:
                seen.count += 1
            else:
                found = exploration.found[finding.signature] = Found(finding, case, exploration.cases)
                if exploration.workaround and found.unexplained:
                    again = compare(case, *baseline.run(case), explains)
                    found.without = again is not None and again.signature == finding.signature
        exploration.seconds = time.monotonic() - started
        progress(exploration)

    everything = corpus.replayed(database) if database else []
    stored = [case for case in everything if kept(case.spec.traits())]  # the rest: outside ``within``
    try:

        @seeded(seed)
        @settings(
            max_examples=10**9,
            deadline=None,
            database=None,
            derandomize=False,
            phases=[Phase.generate],
            verbosity=Verbosity.quiet,
            suppress_health_check=list(HealthCheck),
        )
        @given(cases().filter(lambda case: kept(case.spec.traits())))
        def search(case: Case) -> None:
            observe(case)

        try:
            for case in stored:
                observe(case)
                exploration.replayed += 1
            search()
        except _Spent:
            pass
        exploration.seconds = time.monotonic() - started
        if shrink:
            ends = started + budget
            for found in exploration.shown():
                found.shrunk = _shrunk(found, workers, explains, seed, ends, kept)
    finally:
        workers.close()
        baseline.close()
        exploration.fallbacks = workers.fallbacks + baseline.fallbacks
        exploration.costs = workers.costs
        loading.release()
    if database:  # what did not get its turn this time stays for the next
        found_now = [found.example()[0] for found in exploration.found.values()]
        others = [case for case in everything if not kept(case.spec.traits())]
        corpus.keep(database, found_now + stored[exploration.replayed :] + others)
    return exploration


def _shrunk(
    found: Found, workers: Workers, explains: Explains, seed: int, ends: float, kept: Callable[[Traits], bool]
) -> tuple[Case, Finding] | None:
    """The smallest reduction of the found case Hypothesis reaches that shows the same departure, or
    None where it reached none before the budget ``ends``."""

    def same(case: Case) -> bool:
        if time.monotonic() > ends:
            raise _Spent
        finding = compare(case, *workers.run(case), explains)
        return finding is not None and finding.signature == found.finding.signature

    try:
        case = find(
            reductions(found.case).filter(lambda case: kept(case.spec.traits())),
            same,
            settings=settings(
                max_examples=SHRINK_EXAMPLES,
                deadline=None,
                database=None,
                verbosity=Verbosity.quiet,
                suppress_health_check=list(HealthCheck),
            ),
            random=Random(seed),
        )
    except (NoSuchExample, _Spent):
        return None
    except Exception as err:  # Hypothesis groups an example found with the budget's end while shrinking it
        if spent_in(err):
            return None
        raise
    finding = compare(case, *workers.run(case), explains)
    return (case, finding) if finding is not None and finding.signature == found.finding.signature else None


def spent_in(error: BaseException) -> bool:
    """Whether the budget's end is this error, or one of the errors it groups (a group nests)."""
    return isinstance(error, _Spent) or any(spent_in(e) for e in getattr(error, "exceptions", ()))


def reductions(case: Case) -> st.SearchStrategy[Case]:
    """The case with steps, members, children, ops and hooks dropped, and sizes made smaller: what Hypothesis
    shrinks towards (dropping is ``False``, what ``_kept`` shrinks to). A kept child keeps its attribute
    name, and a step keeps the module it acted on, or is dropped with it."""
    kept_steps = st.tuples(*(_kept() for _ in case.steps))
    sizes = st.tuples(st.integers(1, case.spec.batch), st.integers(1, case.spec.features))
    later = _kept() if case.later else st.just(False)
    return st.builds(partial(_reduced, case), _level_reductions(case.spec.root), kept_steps, sizes, later).filter(
        lambda reduced: bool(reduced.steps)
    )


def _reduced(case: Case, root: Level, keep: tuple[bool, ...], size: tuple[int, int], later: bool) -> Case:
    spec = ModelSpec(root, *size)
    before, after = case.spec.paths(), spec.paths()
    kept: list[Step] = []
    for step, wanted in zip(case.steps, keep):
        if wanted and isinstance(step, (Hook, Assign)):
            path = before[step.where % len(before)]
            if path in after:
                kept.append(replace(step, where=after.index(path)))
        elif wanted:
            kept.append(step)
    return Case(spec, tuple(kept), later)


def _kept() -> st.SearchStrategy[bool]:
    """Whether a part is kept: nine times in ten as drawn, so that the first reductions tried still
    show a departure that needs most of its case; shrunk towards ``False`` (dropped)."""
    return st.integers(0, 9).map(bool)


def _level_reductions(level: Level) -> st.SearchStrategy[Level]:
    children = [st.none() if c is None else _kept().flatmap(partial(_child_reduced, c)) for c in level.children]
    numbers = [number for number, _ in level.named()]

    def rebuilt(
        parameters: int,
        buffers: tuple[bool, ...],
        kids: tuple[Level | None, ...],
        ops: tuple[Op, ...],
        keep: tuple[bool, ...],
        hooked: bool,
    ) -> Level:
        kept = [index for index, k in enumerate(keep) if k]
        position = {old: new for new, old in enumerate(kept)}
        return consistent(
            replace(
                level,
                parameters=parameters,
                buffers=buffers,
                children=tuple(kids[i] for i in kept),
                ops=ops,
                order=tuple(position[i] for i in level.order if i in position),
                names=tuple(numbers[i] for i in kept),
                hooked=hooked,
            )
        )

    return st.builds(
        rebuilt,
        _kept().map(int) if level.parameters else st.just(0),
        st.tuples(*(_kept() for _ in level.buffers)).map(
            lambda keep: tuple(b for b, k in zip(level.buffers, keep) if k)
        ),
        st.tuples(*children),
        st.tuples(*(_kept() for _ in level.ops)).map(lambda keep: tuple(o for o, k in zip(level.ops, keep) if k)),
        st.tuples(*(_kept() for _ in level.children)),
        _kept() if level.hooked else st.just(False),
    )


def _kept_of(parts: tuple[T, ...]) -> st.SearchStrategy[tuple[T, ...]]:
    """``parts`` with some dropped."""
    return st.tuples(*(_kept() for _ in parts)).map(lambda keep: tuple(p for p, k in zip(parts, keep) if k))


def _child_reduced(child: Level, kept: bool) -> st.SearchStrategy[Level | None]:
    """A child level reduced, or (not kept) an ``nn.Linear`` in its place."""
    return _level_reductions(child) if kept else st.none()
