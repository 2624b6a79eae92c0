"""pytest plugin (entry point ``pytest11``): ``@pytest.mark.upstream_bug(ID)`` and the ledger's word.

The marker means what ``repro.expect.known_upstream_bug`` means. ``--upstream-ledger PATH`` names the
ledger (default: ``REPRO_LEDGER``, else the shipped one). The header says what the ledger expects of
each catalogued bug on the installed torch; the terminal summary lists the tests whose expectation
came from it. It loads in every pytest session of the environment: nothing here imports torch, and a
session whose tests use neither the marker nor the decorator only reads the ledger for the header.
The controller reads the ledger once and resolves each bug's expectation for the installed torch;
under pytest-xdist it hands that to the workers (``workerinput``), so a ledger rewritten mid-run
changes nothing a test is held to, and each test's state travels back in its report's
``user_properties``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from repro import expect
from repro.catalogue import BUGS, UnknownBug, get
from repro.ledger import LedgerError
from repro.sanitise import for_terminal

MARKER = "upstream_bug"
PROPERTY = "upstream_bug"  # user_properties key: "BUG_ID|STATE"
WORKERINPUT = "upstream_bug_expectations"  # xdist workerinput: ledger -> torch -> bug id -> [state, reason]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--upstream-ledger",
        metavar="PATH",
        default=None,
        help="ledger for @upstream_bug / known_upstream_bug tests (default: $REPRO_LEDGER, "
        "else the ledger scriptmodule-hook-repro ships)",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker, and refuse a bad ledger in one sentence before any test runs."""
    config.addinivalue_line(
        "markers",
        f"{MARKER}(bug_id): an expected failure while the ledger says the "
        "catalogued bug is present on the installed torch; must pass once fixed",
    )
    config.pluginmanager.register(Summary(), "repro-upstream-summary")
    option = config.getoption("upstream_ledger")
    expect.use_ledger(Path(option) if option else None)
    handed = getattr(config, "workerinput", {}).get(WORKERINPUT)
    if handed is not None:  # an xdist worker: the controller's one reading, never the file again
        expect.pin(handed)
        return
    if not hasattr(config, "workerinput"):  # the controller reads the ledger once per session
        try:
            expect.read_ledger()
        except LedgerError as problem:  # the sentence names --upstream-ledger, REPRO_LEDGER or the packaged one
            raise pytest.UsageError(str(problem)) from None
        _pin_the_ledgers_word()


def _pin_the_ledgers_word() -> None:
    """Resolve each catalogued bug's expectation for the installed torch from the ledger in use, once: the
    tests and the summary then agree, whatever happens to the file during the run."""
    try:
        version = expect.torch_version()
    except Exception:  # no torch: tied tests skip, nothing to resolve
        return
    ledger = str(expect.ledger_in_use())
    words = {bug_id: expect.from_ledger(bug_id) for bug_id in BUGS}
    expect.pin({ledger: {version: {bug_id: [word.state, word.reason] for bug_id, word in words.items()}}})


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist: hand each worker the controller's expectations (``workerinput``)."""
    node.workerinput[WORKERINPUT] = expect.pinned()


def short_path(path: Path) -> str:
    """A path for one terminal line: relative to the working directory or ``~`` where it is under them,
    else ``.../<last three parts>`` when long."""
    for base, shown in ((Path.cwd(), ""), (Path.home(), "~/")):
        try:
            return shown + str(path.resolve().relative_to(base.resolve()))
        except ValueError:
            continue
    return str(path) if len(str(path)) <= 60 else ".../" + "/".join(path.parts[-2:])


def pytest_report_header(config: pytest.Config) -> str:
    """One line, in every session of the environment; what each bug is expected to do goes in the
    terminal summary, and only when tests tied to a bug ran."""
    try:
        version = expect.torch_version()
    except Exception as err:  # PackageNotFoundError, or a torch whose import already failed
        return f"upstream bugs: torch is not installed ({type(err).__name__}); no expectations"
    ledger = expect.ledger_in_use()
    for shown in (str(ledger), short_path(ledger), ledger.name):  # the first that keeps it to one line
        line = for_terminal(f"upstream bugs: torch {version}, ledger {shown} ({expect.ledger_source()})")
        if len(line) <= 100:
            break
    return line


def _items(result: Any) -> Iterator[pytest.Function]:
    for node in result if isinstance(result, list) else [result]:
        if isinstance(node, pytest.Function):
            yield node


@pytest.hookimpl(wrapper=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object) -> Any:
    """Wrap each marked test in the decorator: an unknown id fails its module's collection."""
    result = yield
    for item in _items(result):
        marks = list(item.iter_markers(MARKER))  # the function's, its class's and its module's pytestmark
        if not marks:
            continue
        decorated = getattr(item.obj, "__upstream_bug__", None)
        if len(marks) > 1 or decorated:
            ties = [str(m.args[0]) if len(m.args) == 1 else repr(m.args) for m in marks]
            ties += [f"{decorated} (decorator)"] if decorated else []
            raise pytest.Collector.CollectError(
                f"{item.nodeid}: tied to more than one catalogued bug ({', '.join(ties)}); one {MARKER} marker per test"
            )
        mark = marks[0]
        if len(mark.args) != 1 or not isinstance(mark.args[0], str):
            raise pytest.Collector.CollectError(f"{item.nodeid}: {MARKER} takes one catalogued bug id")
        try:
            get(mark.args[0])  # a misspelled id fails its module's collection, in one sentence
        except UnknownBug:
            raise pytest.Collector.CollectError(expect.unknown_id(mark.args[0], who=item.name)) from None
        item.obj = expect.known_upstream_bug(mark.args[0])(item.obj)
    return result


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Put the test's state in its reports, for the summary (the controller's, under xdist)."""
    bug_id = getattr(getattr(item, "obj", None), "__upstream_bug__", None)
    if bug_id is None and item.get_closest_marker(MARKER):  # a unittest method: pytest_pycollect_makeitem never saw it
        pytest.fail(
            f"{MARKER} marks pytest functions; decorate a TestCase method with repro.expect.known_upstream_bug instead",
            pytrace=False,
        )
    if bug_id is not None:
        try:
            expect.torch_version()
        except Exception:  # PackageNotFoundError: no expectation to hold the test to
            pytest.skip("torch is not installed")
        ledger = getattr(getattr(item, "obj", None), "__upstream_ledger__", None)
        try:
            state = expect.resolve(bug_id, ledger).state
        except LedgerError as problem:  # one sentence naming where the ledger was named, no traceback
            pytest.fail(str(problem), pytrace=False)
        item.user_properties.append((PROPERTY, f"{bug_id}|{state}|{expect.ledger_in_use(ledger)}"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A test decorated with an id the catalogue lacks fails in its one sentence, without a traceback:
    a TestCase method, which the decorator cannot fail through pytest, included."""
    outcome = yield
    report = outcome.get_result()
    if call.excinfo is not None and call.excinfo.errisinstance(expect.UnknownBugInTest):
        report.longrepr = str(call.excinfo.value)


class Summary:
    """Gathers, where the terminal is (the controller under xdist), each ledger-tied test's state and outcome."""

    def __init__(self) -> None:
        self.results: dict[str, tuple[str, str, str, str]] = {}  # nodeid -> (bug, state, ledger, outcome)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        found = [value for key, value in report.user_properties if key == PROPERTY]
        if found and (report.when == "call" or not report.passed):
            bug_id, state, ledger = str(found[-1]).split("|", 2)
            outcome = "xfailed" if hasattr(report, "wasxfail") else report.outcome
            self.results.setdefault(report.nodeid, (bug_id, state, ledger, outcome))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """The ledger each tied test's expectation came from, what it expects of each bug tied to a test
        that ran, then each test: its bug, its expectation and its outcome (lines within 100 columns)."""
        if not self.results:
            return
        ledgers = sorted({ledger for _, _, ledger, _ in self.results.values()})
        terminalreporter.write_sep("=", "upstream bugs: tests whose expectation came from the ledger")
        for ledger in ledgers:  # paths and node ids come from outside: control characters shown as escapes
            shown = ledger if len(ledger) <= 92 else short_path(Path(ledger))
            terminalreporter.write_line(for_terminal(f"ledger: {shown}"))
        seen_bugs = dict.fromkeys(bug_id for bug_id, _, _, _ in self.results.values())
        for bug_id in seen_bugs:
            for ledger in ledgers:
                try:
                    expected = expect.from_ledger(bug_id, ledger)
                except LedgerError:
                    continue
                for line in _wrapped(for_terminal(f"{bug_id}: {expected.state}; {expected.reason}")):
                    terminalreporter.write_line(line)
        by_file: dict[str, list[str]] = {}
        for nodeid, (bug_id, state, _, outcome) in sorted(self.results.items()):
            path, _, name = nodeid.partition("::")
            by_file.setdefault(path, []).append(f"{name or path}:\n      {bug_id}, {state}: {outcome}")
        for path, tests in by_file.items():  # the file once, then its tests: node ids stay whole
            terminalreporter.write_line(for_terminal(f"{path}:"))
            for test in tests:  # the test's name, then its bug, expectation and outcome
                for line in f"  {test}".split("\n"):
                    terminalreporter.write_line(for_terminal(line))


def _wrapped(line: str, width: int = 100, indent: str = "    ") -> list[str]:
    """Prose within ``width`` columns, broken at spaces only (a test's name stays whole)."""
    import textwrap

    wrapped = textwrap.wrap(line, width, subsequent_indent=indent, break_on_hyphens=False, break_long_words=False)
    return wrapped or [line]
