"""Downstream tests that flip with the ledger: ``@known_upstream_bug(bug_id)``.

A decorated test is written as the behaviour users want. While the ledger says the bug is present
on the installed torch, it is an expected failure that must fail *because of that bug*: the bug's
error text anywhere in the exception chain, or a failed assertion while the bug's own scenarios
(the "detector") show it here. Any other failure stays a failure, and a pass is one too (strict).
When the ledger says fixed, the test must pass. When it says ``incomplete-fix`` (the bug's error is
gone, its APIs still depart from nn.Module), the bug's error text or any failed assertion is an
expected failure, and a pass is reported as a pass (not strict: the fix may cover this test). A
torch that cannot have the bug (its APIs are absent) or a release the ledger could not test skips
the test with the reason.

Under unittest (``python -m unittest``, torch's ``run_tests()``, pytest running a ``TestCase``)
an expected failure is reported as unittest's own; a plain pytest function reports ``xfailed``.
Nothing here imports torch: the detector imports it when a decorated test first runs.
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
import sys
import unittest
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, TypeVar

from repro.catalogue import BUGS, UnknownBug, get
from repro.catalogue.bug import Bug
from repro.ledger import LedgerError, expectation_for, ledger_path, load
from repro.vocabulary import Status, Verdict

# unittest leaves this module's frames out of the tracebacks it prints: a test's error starts at the test.
__unittest = True

EXPECTED_FAILURE, MUST_PASS, SKIPPED = "expected failure", "must pass", "skipped"
MAY_FAIL = "expected failure, not strict"  # an incomplete fix: a failure is the bug's, a pass is a pass
LEDGER_STATES = {
    Status.PRESENT: EXPECTED_FAILURE,
    Status.FIXED: MUST_PASS,
    Status.INCOMPLETE_FIX: MAY_FAIL,
    Status.CANNOT_TEST: SKIPPED,
}

Test = TypeVar("Test", bound=Callable[..., Any])
_override: Path | None = None  # set by the pytest plugin's --upstream-ledger
_override_source = "--upstream-ledger"


@dataclass(frozen=True)
class Expected:
    """What a test tied to one bug must do on the installed torch, and why."""

    bug_id: str
    state: str  # EXPECTED_FAILURE, MUST_PASS or SKIPPED
    reason: str


class UnexpectedPass(AssertionError):
    """The test passed while the ledger says its bug is present: the ledger is stale (strict)."""


def use_ledger(path: Path | None, source: str = "--upstream-ledger") -> None:
    """Make ``path`` the ledger of every test that names none (the plugin's ``--upstream-ledger``)."""
    global _override, _override_source
    _override, _override_source = path, source


def ledger_source(ledger: str | Path | None = None) -> str:
    """Where the ledger in use was named: the decorator's argument, the plugin's option, the
    environment variable, or nowhere (the packaged ledger)."""
    if ledger is not None:
        return "known_upstream_bug(ledger=...)"
    if _override is not None:
        return _override_source
    if os.environ.get("REPRO_LEDGER"):
        return "REPRO_LEDGER"
    return "the packaged ledger"


def read_ledger(ledger: str | Path | None = None) -> dict[str, Any]:
    """The ledger in use, validated; a bad one is one sentence naming where it was named
    (``LedgerError``), never the reader's traceback."""
    try:
        return loaded_ledger(ledger_in_use(ledger))
    except LedgerError as problem:
        raise LedgerError(f"{ledger_source(ledger)}: {problem}") from None


def ledger_in_use(ledger: str | Path | None = None) -> Path:
    """The test's own ledger, else the plugin's, else ``REPRO_LEDGER``, else the shipped one."""
    return Path(ledger) if ledger is not None else _override or ledger_path()


def torch_version() -> str:
    """The installed torch's version, without importing torch where nothing has (the plugin's header)."""
    torch = sys.modules.get("torch")
    return str(torch.__version__) if torch is not None else importlib.metadata.version("torch")


@functools.cache
def loaded_ledger(path: Path) -> dict[str, Any]:
    """The ledger at ``path``, read and validated once per process (``LedgerError`` if it is bad)."""
    return load(path)


_pinned: dict[tuple[str, str, str], Expected] = {}  # (ledger path, torch, bug id) -> the ledger's word


def pin(expectations: dict[str, dict[str, dict[str, list[str]]]]) -> None:
    """Fix the ledger's word for this session (ledger path -> torch version -> bug id -> [state, reason]):
    what the pytest controller read once and handed to every xdist worker, so that a ledger rewritten
    mid-run changes nothing any test is held to."""
    for ledger, versions in expectations.items():
        for version, bugs in versions.items():
            for bug_id, (state, reason) in bugs.items():
                _pinned[(ledger, version, bug_id)] = Expected(bug_id, state, reason)


def pinned() -> dict[str, dict[str, dict[str, list[str]]]]:
    """What ``pin`` fixed, in the form it takes (JSON-able, for ``workerinput``)."""
    found: dict[str, dict[str, dict[str, list[str]]]] = {}
    for (ledger, version, bug_id), expected in _pinned.items():
        found.setdefault(ledger, {}).setdefault(version, {})[bug_id] = [expected.state, expected.reason]
    return found


def from_ledger(bug_id: str, ledger: str | Path | None = None) -> Expected:
    """The ledger's word alone (no torch import): what the header prints; the session's pinned word
    where the pytest plugin fixed one for that ledger and torch."""
    version = torch_version()
    fixed = _pinned.get((str(ledger_in_use(ledger)), version, bug_id))
    if fixed is not None:
        return fixed
    expectation = expectation_for(read_ledger(ledger), version, bug_id)
    return Expected(
        bug_id,
        LEDGER_STATES[Status(expectation.outcome)],
        f"the ledger says {bug_id} is {expectation.outcome} on torch {version} ({expectation.reason})",
    )


@functools.cache
def detector_status(bug_id: str) -> tuple[str, str]:
    """The bug's own scenarios on this torch, once per process: (status, detail) as the report has it."""
    from repro.catalogue import explain, select
    from repro.engine.oracle import run_all
    from repro.report import status_of

    return status_of(BUGS[bug_id], run_all("cpu", select([bug_id], slow=True).scenarios, explains=explain), None)


def resolve(bug_id: str, ledger: str | Path | None = None) -> Expected:
    """The ledger's word, unless this torch cannot have the bug at all (then the test skips)."""
    expected = from_ledger(bug_id, ledger)
    if expected.state == SKIPPED:
        return expected
    status, detail = detector_status(bug_id)
    if status == Status.NOT_APPLICABLE:
        return Expected(bug_id, SKIPPED, f"{bug_id} cannot occur on torch {torch_version()}: {detail}")
    return expected


def _chain(err: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    link: BaseException | None = err
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        yield link
        # as tracebacks show it: ``raise ... from None`` says the context was not the cause
        link = link.__cause__ or (None if link.__suppress_context__ else link.__context__)


def shows_error_text(bug: Bug, err: BaseException) -> bool:
    """Does ``err`` (or an exception it chains) carry the bug's error text? Asked of the bug's own
    recogniser, as an oracle result that raised, so the catalogue stays the one source of that text."""
    return any(
        bug.recognise(
            SimpleNamespace(  # type: ignore[arg-type]  # the fields recognisers read
                verdict=Verdict.RAISES,
                detail=f"{type(e).__name__}: {e}",
                style=bug.styles[0],
                scenario=SimpleNamespace(  # the text decides
                    api=bug.apis[0], apis=set(bug.apis), model=None, name="", traits=None
                ),
                scripted=None,
                eager=None,
            )
        )
        for e in _chain(err)
    )


def caused_by(bug: Bug, err: BaseException, state: str = EXPECTED_FAILURE) -> bool:
    """The bug's error text, or a failed assertion while the detector shows the bug on this torch (or,
    for an incomplete fix, any failed assertion: the departures left are by definition unrecognised)."""
    if shows_error_text(bug, err):
        return True
    return isinstance(err, AssertionError) and (state == MAY_FAIL or detector_status(bug.id)[0] == "present")


class _ExpectingFailure:
    """``__unittest_expecting_failure__`` decided by the run itself. ``TestCase.run`` reads the flag
    before the test (``a or flag`` keeps the object) and asks its truth only when the test raised and
    after it ended: true exactly when this run failed because of the bug."""

    def __init__(self) -> None:
        self.now = False

    def __bool__(self) -> bool:
        return self.now


def _skip(case: unittest.TestCase | None, reason: str) -> None:
    if case is not None:
        case.skipTest(reason)
    import pytest

    pytest.skip(reason)


def _xfail(reason: str) -> None:
    import pytest

    pytest.xfail(reason)


def unknown_id(bug_id: str, who: str = "known_upstream_bug") -> str:
    """One sentence within 100 columns for an id the catalogue lacks, with the closest catalogued id."""
    return f"{who}: {UnknownBug(bug_id)}"


def _unknown(bug_id: str) -> Callable[[Test], Test]:
    """A misspelled id fails each test it decorates, in one sentence, rather than the import of its module
    with a traceback (unittest's loader prints one for any exception raised at import)."""
    sentence = unknown_id(bug_id)

    def decorate(test: Test) -> Test:
        @functools.wraps(test)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            case = args[0] if args and isinstance(args[0], unittest.TestCase) else None
            if case is None and "pytest" in sys.modules:
                import pytest

                pytest.fail(sentence, pytrace=False)
            raise UnknownBugInTest(sentence)

        return wrapper  # type: ignore[return-value]

    return decorate


class UnknownBugInTest(AssertionError):
    """A test decorated with an id the catalogue lacks (one sentence)."""


def known_upstream_bug(bug_id: str, *, ledger: str | Path | None = None) -> Callable[[Test], Test]:
    """Tie a test of the wanted behaviour to a catalogued bug. An id that is not one, or a decorator used
    without its id, raises ``UnknownBug`` here, in one sentence that names the catalogued ids."""
    if callable(bug_id) or not isinstance(bug_id, str):
        raise TypeError(
            f"known_upstream_bug takes a catalogued bug id, as in @known_upstream_bug({next(iter(BUGS))!r}), "
            f"not {type(bug_id).__name__}"
        )
    if ledger is not None and not isinstance(ledger, (str, Path)):
        raise TypeError(f"known_upstream_bug's ledger= is a path, not {type(ledger).__name__}")
    if bug_id not in BUGS:
        return _unknown(bug_id)
    bug = get(bug_id)

    def decorate(test: Test) -> Test:
        flag = _ExpectingFailure()

        @functools.wraps(test)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            flag.now = False
            case = args[0] if args and isinstance(args[0], unittest.TestCase) else None
            try:
                expected = resolve(bug.id, ledger)
            except LedgerError as problem:  # one sentence: under pytest a failure without traceback
                if case is None and "pytest" in sys.modules:
                    import pytest

                    pytest.fail(str(problem), pytrace=False)
                raise LedgerError(str(problem)) from None
            if expected.state == SKIPPED:
                _skip(case, expected.reason)
            try:
                result = test(*args, **kwargs)
            except Exception as err:
                if expected.state not in (EXPECTED_FAILURE, MAY_FAIL) or not caused_by(bug, err, expected.state):
                    raise
                if case is None:
                    _xfail(expected.reason)
                flag.now = True
                raise
            if expected.state == EXPECTED_FAILURE:
                raise UnexpectedPass(
                    f"{test.__qualname__} passed, but {expected.reason}: if torch fixed it, "
                    "record the fix in the ledger"
                )
            return result

        wrapper.__unittest_expecting_failure__ = flag  # type: ignore[attr-defined]
        wrapper.__upstream_bug__ = bug.id  # type: ignore[attr-defined]  # what the pytest plugin lists
        wrapper.__upstream_ledger__ = ledger  # type: ignore[attr-defined]  # the ledger it names, if any
        return wrapper  # type: ignore[return-value]

    return decorate
