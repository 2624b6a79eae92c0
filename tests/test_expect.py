"""Downstream tests that flip from the ledger: ``repro.expect.known_upstream_bug`` and the pytest plugin.

The decision table runs in process (a faked detector, ledgers written per case) under unittest and
as a plain pytest function; the rest runs in subprocesses, as a downstream project would: the example
suite on torch as installed, patched with the true fix and patched with the one-liner that silences the
error; the marker and the decorator under pytest (xdist too), ``python -m unittest`` and torch's
``run_tests()``; and the plugin in a session that uses none of it.
"""

from __future__ import annotations

import io
import os
import textwrap
import unittest
from pathlib import Path
from typing import Any

import pytest
import tomllib
import torch

from helpers import A_BUG, ROOT, run, write_fixed_ledger, write_ledger
from repro import expect
from repro.catalogue import BUGS
from repro.catalogue.full_backward_hook_flag import SIGNATURE
from repro.ledger import release_key

EXAMPLE = ROOT / "examples" / "downstream" / "test_script_module_hooks.py"
ONE_PROCESS = ["-m", "pytest", "-n", "0", "-p", "no:cacheprovider", "-rxs"]  # a patch applied in memory lives in it
BUG_ERROR = f"{SIGNATURE} to type NoneType: Cannot cast True to None"


def _raise(err: BaseException) -> None:
    raise err


def _chained() -> None:
    try:
        raise RuntimeError(BUG_ERROR)
    except RuntimeError as err:
        raise ValueError("the model could not be prepared") from err


def _summarised() -> None:
    """A paste script's way: the error's first line in an assertion, its context suppressed."""
    try:
        raise RuntimeError(BUG_ERROR)
    except RuntimeError:
        raise AssertionError("the model could not be prepared") from None


BODIES = {
    "bug error": lambda: _raise(RuntimeError(BUG_ERROR)),
    "assertion from None over the bug error": _summarised,
    "bug error, chained": _chained,
    "assertion": lambda: _raise(AssertionError("the hook ran 0 times")),
    "other error": lambda: _raise(ValueError("unrelated")),
    "pass": lambda: None,
}


def _ledger(path: Path, outcome: str) -> Path:
    """A ledger whose confirmed result for the installed release is ``outcome`` for the original bug."""
    if outcome == "fixed":
        return write_fixed_ledger(path, torch.__version__)
    return write_ledger(path, releases={release_key(torch.__version__): {"dynamic": {"verdict": outcome}}})


# (ledger says, detector says, test body) -> what the run must report
DECISIONS = [
    ("present", "present", "bug error", "expected failure"),
    ("present", "present", "bug error, chained", "expected failure"),
    ("present", "present", "assertion", "expected failure"),
    ("present", "fixed", "assertion", "failure"),  # an assertion the detector does not confirm: not the bug
    ("present", "fixed", "bug error", "expected failure"),  # its own error text needs no detector
    # a context suppressed (``from None``) is not the cause, as tracebacks show it: the detector decides
    ("present", "present", "assertion from None over the bug error", "expected failure"),
    ("present", "fixed", "assertion from None over the bug error", "failure"),
    ("present", "present", "other error", "error"),
    ("present", "present", "pass", "failure"),  # strict: the ledger is stale
    ("fixed", "fixed", "pass", "success"),
    ("fixed", "fixed", "bug error", "error"),
    ("fixed", "present", "assertion", "failure"),
    ("present", "not-applicable", "bug error", "skipped"),
    ("cannot-test", "present", "bug error", "skipped"),
    # an incomplete fix: the error text or any failed assertion is the bug's; a pass is a pass (not strict)
    ("incomplete-fix", "incomplete-fix", "assertion", "expected failure"),
    ("incomplete-fix", "incomplete-fix", "bug error", "expected failure"),
    ("incomplete-fix", "incomplete-fix", "pass", "success"),
    ("incomplete-fix", "incomplete-fix", "other error", "error"),
]


@pytest.fixture
def decorated(tmp_path, monkeypatch, request):
    """A test body decorated against a ledger and a detector saying what the case says."""
    ledger_says, detector_says, body = request.param
    monkeypatch.setattr(expect, "detector_status", lambda bug_id: (detector_says, "faked for this case"))
    return expect.known_upstream_bug(A_BUG, ledger=_ledger(tmp_path / "ledger.json", ledger_says)), BODIES[body]


def _unittest_outcome(result: unittest.TestResult) -> str:
    kinds = {
        "expected failure": result.expectedFailures,
        "failure": result.failures,
        "error": result.errors,
        "skipped": result.skipped,
        "unexpected success": result.unexpectedSuccesses,
    }
    found = [kind for kind, entries in kinds.items() if entries]
    return found[0] if len(found) == 1 else "success" if result.wasSuccessful() and not found else str(found)


@pytest.mark.parametrize(
    ("decorated", "want"),
    [(case[:3], case[3]) for case in DECISIONS],
    ids=["-".join(case[:3]).replace(" ", "_") for case in DECISIONS],
    indirect=["decorated"],
)
def test_decision_under_unittest(decorated, want):
    decorate, body = decorated

    class Case(unittest.TestCase):
        @decorate
        def test_behaviour(self):
            body()

    result = unittest.TextTestRunner(stream=io.StringIO()).run(Case("test_behaviour"))
    assert _unittest_outcome(result) == want


PYTEST_OUTCOMES: dict[str, Any] = {
    "expected failure": pytest.xfail.Exception,
    "skipped": pytest.skip.Exception,
    "failure": AssertionError,
    "error": (RuntimeError, ValueError),
}


@pytest.mark.parametrize(
    ("decorated", "want"),
    [(case[:3], case[3]) for case in DECISIONS],
    ids=["-".join(case[:3]).replace(" ", "_") for case in DECISIONS],
    indirect=["decorated"],
)
def test_decision_as_a_pytest_function(decorated, want):
    decorate, body = decorated
    test = decorate(lambda: body())
    if want == "success":
        test()
        return
    with pytest.raises(PYTEST_OUTCOMES[want]) as raised:
        test()
    if want == "failure":
        assert isinstance(raised.value, expect.UnexpectedPass) == (body is BODIES["pass"])


def test_a_misspelled_id_fails_each_test_in_one_sentence_not_the_import():
    """Before: UnknownBug at decoration, which unittest's loader reports as an import error with a traceback."""
    decorated = expect.known_upstream_bug("full-backward-hook-flg")(lambda: None)  # no exception at import

    class Case(unittest.TestCase):
        test_x = expect.known_upstream_bug("no-such-bug")(lambda self: None)

    result = unittest.TestResult()
    Case("test_x").run(result)
    assert len(result.failures) == 1 and not result.errors
    assert (
        result.failures[0][1]
        .strip()
        .splitlines()[-1]
        .endswith("known_upstream_bug: unknown bug id 'no-such-bug' (--list-bugs lists them)")
    )
    with pytest.raises(pytest.fail.Exception, match="did you mean 'full-backward-hook-flag'"):
        decorated()


@pytest.mark.parametrize("wrong", [print, 3, None], ids=["bare-decorator", "a-number", "none"])
def test_a_decorator_without_its_id_is_one_sentence(wrong):
    with pytest.raises(TypeError, match=r"^known_upstream_bug takes a catalogued bug id, as in @known_upstream_bug"):
        expect.known_upstream_bug(wrong)


def test_detector_confirms_the_bug_as_the_ledger_does():
    """The real detector, once per process, agrees with the shipped ledger on the installed torch."""
    assert expect.detector_status(A_BUG)[0] == (
        "fixed" if expect.from_ledger(A_BUG, expect.ledger_path()).state == expect.MUST_PASS else "present"
    )


# --- the example downstream suite: green where the ledger and torch agree, red where they do not ------------


@pytest.mark.needs_bug(A_BUG)  # the shipped ledger and the installed torch both say present
@pytest.mark.slow
def test_example_is_green_on_installed_torch_with_header_and_summary_under_xdist():
    proc = run(["-m", "pytest", "-n", "1", "-p", "no:cacheprovider", str(EXAMPLE)])  # a worker: states travel
    out = proc.stdout
    assert proc.returncode == 0 and "18 passed, 1 xfailed" in out, out + proc.stderr
    assert f"upstream bugs: torch {torch.__version__}, ledger " in out  # the header: one line
    assert f"ledger: {ROOT / 'repro' / 'ledger.json'}" in out  # the summary names the ledger read
    assert f"{A_BUG}: expected failure; the ledger says {A_BUG} is present on" in out
    assert "module-compile-noop: expected failure;" not in out  # no test tied to it ran
    assert (
        "test_script_module_hooks.py:\n  TestScriptModuleHooks::test_full_backward_hook_called_with_gradients:\n"
        f"      {A_BUG}, expected failure: xfailed"
    ) in out
    assert max(len(line) for line in out.splitlines()) <= 100


@pytest.mark.needs_bug(A_BUG)
@pytest.mark.parametrize(
    ("candidate", "ledger_says_fixed", "exit_code", "summary", "why"),
    [
        ("upstream-patch", True, 0, "19 passed", ""),
        (
            "upstream-patch",
            False,
            1,
            "1 failed, 18 passed",
            "UnexpectedPass: TestScriptModuleHooks.test_full_backward_hook_called_with_gradients passed, "
            "but the ledger",
        ),
        ("ignored-attributes", True, 1, "1 failed, 18 passed", "the full backward hook ran 0 times"),
    ],
    ids=["fixed-ledger-fixed", "fixed-ledger-stale", "silenced-ledger-claims-fix"],
)
@pytest.mark.slow
def test_example_follows_ledger_on_patched_torch(tmp_path, candidate, ledger_says_fixed, exit_code, summary, why):
    ledger = write_fixed_ledger(tmp_path / "ledger.json", torch.__version__) if ledger_says_fixed else None
    proc = run(["-m", "repro.run_patched", f"{A_BUG}:{candidate}", *ONE_PROCESS, str(EXAMPLE)], ledger=ledger)
    assert proc.returncode == exit_code and summary in proc.stdout, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert why in proc.stdout
    assert f"{A_BUG}, {'must pass' if ledger_says_fixed else 'expected failure'}: " in proc.stdout


def test_example_is_not_part_of_this_projects_suite():
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert options["testpaths"] == ["tests"] and not EXAMPLE.is_relative_to(ROOT / "tests")


# --- the decorator and the marker as downstream suites meet them: pytest, python -m unittest, run_tests() ------

NET = """
import torch

from repro.expect import known_upstream_bug


class Net(torch.jit.ScriptModule):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(2, 2)

    def forward(self, x):
        return self.linear(x)


def hook_fires():
    calls = []
    Net().register_full_backward_hook(lambda module, grad_input, grad_output: calls.append(grad_input))
    assert calls == []
"""

TESTCASE = f"""
class TestHooks(TestCase):
    @known_upstream_bug("{A_BUG}")
    def test_bug(self):
        hook_fires()

    @known_upstream_bug("{A_BUG}")
    def test_other_failure(self):
        raise ValueError("not the bug")

    @known_upstream_bug("{A_BUG}")
    def test_passes(self):
        pass
"""

PYTEST_SUITE = (
    NET
    + f"""
import pytest
from unittest import TestCase


@pytest.mark.upstream_bug("{A_BUG}")
def test_marker_bug():
    hook_fires()


@pytest.mark.upstream_bug("{A_BUG}")
def test_marker_other_failure():
    raise ValueError("not the bug")


@known_upstream_bug("{A_BUG}")
def test_decorator_bug():
    hook_fires()


@known_upstream_bug("{A_BUG}")
def test_decorator_other_failure():
    raise ValueError("not the bug")


class TestMarked(TestCase):
    @pytest.mark.upstream_bug("{A_BUG}")
    def test_marked(self):
        hook_fires()
"""
    + TESTCASE
)

TORCH_SUITE = (
    NET
    + "\nfrom torch.testing._internal.common_utils import TestCase, run_tests\n"
    + TESTCASE
    + """

if __name__ == "__main__":
    run_tests()
"""
)


def _write(directory: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (directory / name).write_text(textwrap.dedent(text))
    return directory


@pytest.mark.needs_bug(A_BUG)
@pytest.mark.slow
def test_pytest_marker_and_decorator_reject_other_failures_and_unknown_ids(tmp_path):
    _write(
        tmp_path,
        {
            "test_downstream.py": PYTEST_SUITE,
            "test_unknown.py": 'import pytest\n\n\n@pytest.mark.upstream_bug("no-such-bug")\ndef test_x():\n    pass\n',
        },
    )
    proc = run(
        [*ONE_PROCESS, "-rf", "--continue-on-collection-errors", "test_downstream.py", "test_unknown.py"], cwd=tmp_path
    )
    out = proc.stdout
    assert proc.returncode == 1 and "4 failed, 3 xfailed" in out and " 2 errors in " in out, out + proc.stderr
    assert "test_x: unknown bug id 'no-such-bug' (--list-bugs lists them)" in out
    failed = sorted(line.split()[1].split("::", 1)[1] for line in out.splitlines() if line.startswith("FAILED "))
    assert failed == [
        "TestHooks::test_other_failure",
        "TestHooks::test_passes",
        "test_decorator_other_failure",
        "test_marker_other_failure",
    ]
    assert "ERROR at setup of TestMarked.test_marked" in out  # the marker cannot wrap a unittest method
    assert "upstream_bug marks pytest functions; decorate a TestCase method with repro.expect.known_upstream_bug" in out
    summary = out.split("test_downstream.py:\n", 1)[1]  # the terminal summary: tests under their file
    assert f"  test_marker_bug:\n      {A_BUG}, expected failure: xfailed" in summary
    assert f"  test_marker_other_failure:\n      {A_BUG}, expected failure: failed" in summary


@pytest.mark.needs_bug(A_BUG)
@pytest.mark.parametrize(
    ("args", "summary"),
    [
        (
            ["-m", "unittest", "discover", "-p", "downstream_*.py"],
            "FAILED (failures=2, errors=1, expected failures=1)",
        ),  # the unknown id: a failure of its test, no longer an import error
        (["downstream_hooks.py"], "FAILED (failures=1, errors=1, expected failures=1)"),
    ],
    ids=["python-m-unittest", "torch-run_tests"],
)
@pytest.mark.slow
def test_unittest_runners_keep_only_the_bugs_failure_expected(tmp_path, args, summary):
    """torch's ``run_tests()`` wants xmlrunner where ``CI`` is set: unset here, as on a developer's machine."""
    _write(
        tmp_path,
        {
            "downstream_hooks.py": TORCH_SUITE,
            "downstream_unknown.py": "import unittest\n\nfrom repro.expect import known_upstream_bug\n\n\n"
            "class TestUnknown(unittest.TestCase):\n"
            '    @known_upstream_bug("no-such-bug")\n    def test_x(self):\n        pass\n',
        },
    )
    proc = run(args, cwd=tmp_path, env={"CI": ""})
    err = proc.stderr
    assert proc.returncode == 1 and summary in err, proc.stdout + err
    assert "ValueError: not the bug" in err and "UnexpectedPass: TestHooks.test_passes passed, but the ledger" in err
    assert ("unknown bug id 'no-such-bug'" in err) == ("discover" in args)


# --- the plugin in every session of the environment ---------------------------------------------------------


@pytest.mark.slow  # a nested pytest
def test_plugin_costs_a_header_in_a_session_that_does_not_use_it(tmp_path):
    _write(
        tmp_path,
        {
            "test_light.py": """
        import os
        import sys


        def test_nothing_of_torch_was_touched():
            assert "torch" not in sys.modules and "repro.engine" not in sys.modules
            assert "TORCH_DEVICE_BACKEND_AUTOLOAD" not in os.environ
        """
        },
    )
    proc = run(["-m", "pytest", "-p", "no:cacheprovider", "test_light.py"], cwd=tmp_path)
    assert proc.returncode == 0 and "1 passed" in proc.stdout, proc.stdout + proc.stderr
    header = [line for line in proc.stdout.splitlines() if line.startswith("upstream bugs: ")]
    assert len(header) == 1 and len(header[0]) <= 100, header  # one line; expectations only in the summary
    named = "(REPRO_LEDGER)" if os.environ.get("REPRO_LEDGER") else "(the packaged ledger)"  # as the suite runs
    assert named in header[0] and "; the ledger says " not in proc.stdout
    assert "upstream bugs: tests whose expectation" not in proc.stdout  # the summary: only when tied tests ran


@pytest.mark.slow  # nested pytest runs
@pytest.mark.parametrize("how", ["option", "REPRO_LEDGER"])
def test_bad_ledger_is_one_line(tmp_path, how):
    bad = tmp_path / "ledger.json"
    bad.write_text('{"schema": 2, "bugs": [], "releases": {}}')
    option = ["--upstream-ledger", str(bad)] if how == "option" else []
    proc = run(["-m", "pytest", "-p", "no:cacheprovider", *option], cwd=tmp_path, ledger=bad)
    assert proc.returncode == 4, proc.stdout + proc.stderr
    source = "--upstream-ledger" if how == "option" else "REPRO_LEDGER"  # the one that named it
    assert (proc.stdout + proc.stderr).strip().splitlines() == [
        f"ERROR: {source}: the ledger {bad} has no 'bugs' object of bug objects."
    ]


@pytest.mark.slow  # a nested pytest that imports torch
def test_a_misspelt_id_under_pytest_is_one_line_naming_the_closest_id(tmp_path):
    """Issue 46: the marker listed all 18 ids on one 300-column line, and a decorated TestCase method
    failed with a traceback; both now say the closest id in one line within 100 columns."""
    (tmp_path / "test_marker.py").write_text(
        'import pytest\n\n\n@pytest.mark.upstream_bug("full-backward-hook-flg")\ndef test_marker():\n    pass\n'
    )
    (tmp_path / "test_decorated.py").write_text(
        "import unittest\n\nfrom repro.expect import known_upstream_bug\n\n\n"
        'class T(unittest.TestCase):\n    @known_upstream_bug("full-backward-hook-flg")\n'
        "    def test_decorated(self):\n        pass\n"
    )
    files = ["test_marker.py", "test_decorated.py"]
    proc = run([*ONE_PROCESS, "--continue-on-collection-errors", *files], cwd=tmp_path)
    said = [line for line in proc.stdout.splitlines() if "unknown bug id" in line and "::" not in line]
    close = "unknown bug id; did you mean 'full-backward-hook-flag'?"
    assert said == [f"test_marker: {close}", f"known_upstream_bug: {close}"], proc.stdout
    assert all(len(line) <= 100 for line in said) and "Traceback" not in proc.stdout


@pytest.mark.parametrize("bug_id", list(BUGS))
def test_asking_any_bugs_recogniser_about_an_error_text_reads_only_fields_it_is_given(bug_id):
    """shows_error_text hands each recogniser a stand-in result: a recogniser that reads a field the
    stand-in lacks (the scenario's own API) raised AttributeError inside users' tied tests."""
    from repro.expect import shows_error_text

    assert shows_error_text(BUGS[bug_id], RuntimeError("an error no bug raises")) is False
