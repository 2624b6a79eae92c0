"""Shared set-up: check the environment once, skip device tests without a device, and skip
tests that only mean something while the ledger expects the bug; and the fixtures several test modules use."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from repro.catalogue import BUGS
from repro.environment import EnvironmentProblem, import_torch, npu_status
from repro.source_checks import RECURSIVE_PY, SCRIPT_PY, installed_torch_root

SETUP = "activate the project's environment (. .venv/bin/activate) or create it with the README's set-up command"
# The tracker's retries wait almost nothing in the tests, their processes and those they start: a refused
# connection cost 1.2 s of sleeps (tests/tracker/test_remote.py checks the 0.2 default's waits).
os.environ.setdefault("REPRO_TRACKER_RETRY_BACKOFF", "0.001")


def pytest_addoption(parser: pytest.Parser) -> None:
    """Without pytest-xdist, accept its options from pyproject's addopts so pytest_configure can say what is missing."""
    if importlib.util.find_spec("xdist") is None:
        group = parser.getgroup("xdist-missing")
        group._addoption("-n", dest="numprocesses")
        group._addoption("--dist", dest="dist")


def pytest_configure(config: pytest.Config) -> None:
    """One sentence instead of a conftest traceback when the suite runs outside its environment."""
    try:
        import_torch()  # the way the CLI imports it: device-backend autoload off
    except EnvironmentProblem as problem:
        pytest.exit(f"{problem}; {SETUP}.", returncode=pytest.ExitCode.USAGE_ERROR)
    if importlib.util.find_spec("xdist") is None:  # pyproject's addopts run the suite on pytest-xdist
        pytest.exit(f"pytest-xdist is not installed; {SETUP}.", returncode=pytest.ExitCode.USAGE_ERROR)


def pytest_runtest_setup(item: pytest.Item) -> None:
    import torch

    from helpers import expected

    needs_bug = item.get_closest_marker("needs_bug")
    if needs_bug and not needs_bug.args:  # no bug is the default: the first catalogued is not special
        pytest.fail("needs_bug names no bug: name each one the test needs", pytrace=False)
    for bug_id in needs_bug.args if needs_bug else ():  # each bug it names
        if bug_id not in BUGS:  # a misspelt id read as "not present" would skip the test for ever
            pytest.fail(f"needs_bug names {bug_id!r}, which the catalogue does not hold", pytrace=False)
        expectation = expected(bug_id)
        if expectation.outcome != "present":
            pytest.skip(
                f"only meaningful while {bug_id} is present; the ledger expects {expectation.outcome} "
                f"({expectation.reason})"
            )
    if item.get_closest_marker("cuda") and not torch.cuda.is_available():
        pytest.skip("no CUDA device on this machine")
    if item.get_closest_marker("npu"):
        usable, status = npu_status()
        if not usable:
            pytest.skip(f"no usable NPU: torch_npu {status}")


def _serving(server):
    """Start a loopback server for one test (its address as ``server.url``) and stop it after."""
    server.url = server.start()
    yield server
    server.stop()


@pytest.fixture
def index():
    """A package index on loopback (tests/index_server.py), serving the wheels a test puts in it."""
    from index_server import IndexServer

    yield from _serving(IndexServer())


@pytest.fixture
def server():
    """A loopback server answering each path as a test scripts it (tests/hostile_server.py)."""
    from hostile_server import HostileServer

    yield from _serving(HostileServer())


_MEASURED: dict = {}


@pytest.fixture(scope="session", autouse=True)
def _proofs_shared_by_workers(tmp_path_factory):
    """``helpers.proof_of`` keeps each proof in the folder this session's xdist workers share."""
    import helpers

    root = tmp_path_factory.getbasetemp()
    helpers.SHARED_BY_WORKERS[:] = [root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root]


@pytest.fixture
def measured_once(monkeypatch, tmp_path_factory):
    """The CLI's runs in this test measure each scenario list once per test session: the support
    table's text and JSON renderings, and another module's test of the same table (often on another
    xdist worker, which reads the first measurement from this session's temporary folder), read one."""
    import hashlib
    import pickle

    from repro.engine import oracle

    run_all = oracle.run_all
    root = tmp_path_factory.getbasetemp()
    shared = root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root  # xdist: gw0, gw1 ... in one

    def once(device, scenarios, processes=1, *, explains):
        key = (device, tuple(s.key for s in scenarios))
        path = shared / f"measured-{hashlib.sha256(repr(key).encode()).hexdigest()[:16]}.pickle"
        if key not in _MEASURED and path.exists():
            by_key = {s.key: s for s in scenarios}
            runs, said, reason = pickle.loads(path.read_bytes())
            _MEASURED[key] = oracle.OracleRun(
                [oracle.ScenarioResult(by_key[k], *rest) for k, *rest in runs], said, reason
            )
        if key not in _MEASURED:
            measured = _MEASURED[key] = run_all(device, scenarios, processes, explains=explains)
            runs = [
                (r.scenario.key, r.style, r.verdict, r.detail, r.scripted, r.eager, r.instance)
                for r in measured.results
            ]
            written = path.with_suffix(f".{os.getpid()}")
            written.write_bytes(pickle.dumps((runs, measured.warnings, measured.cannot_test)))
            os.replace(written, path)  # whole or absent for a worker reading it
        return _MEASURED[key]

    monkeypatch.setattr(oracle, "run_all", once)


UPSTREAM_TEST_JIT = """# Owner(s): ["oncall: jit"]

import torch

# The JIT tests live in test/jit and are imported here, so that the runner collects them.
from jit.test_tracer import TestTracer  # noqa: F401
from jit.test_hooks import TestHooks  # noqa: F401

from torch.testing._internal.common_utils import run_tests

if __name__ == "__main__":
    run_tests()
"""


UPSTREAM_TEST_QUANTIZATION = """# Owner(s): ["oncall: quantization"]

from torch.testing._internal.common_utils import run_tests

# Eager mode quantization tests
from quantization.eager.test_quantize_eager_ptq import TestQuantizeEagerPTQStatic  # noqa: F401

if __name__ == "__main__":
    run_tests()
"""


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A small checkout in upstream's shape: the installed torch's files that any bug's upstream patch
    edits, and a test/test_jit.py (the upstream patches' tests, test_filing.py and test_patch_against.py,
    apply them there)."""
    from repro.catalogue import BUGS

    edited = {path for bug in BUGS.values() for path in bug.fixes.patch.files}
    for path in sorted(edited | {RECURSIVE_PY, SCRIPT_PY}):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(installed_torch_root() / path, tmp_path / path)
    for folder in ("jit", "export", "dynamo", "quantization/eager"):
        (tmp_path / "test" / folder).mkdir(parents=True)
    (tmp_path / "test" / "test_jit.py").write_text(UPSTREAM_TEST_JIT)
    (tmp_path / "test" / "test_quantization.py").write_text(UPSTREAM_TEST_QUANTIZATION)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    return tmp_path
