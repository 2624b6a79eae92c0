"""What the test modules share: the project's entry points run in subprocesses, as a user would, or its
scripts in this process; what the ledger expects and the per-bug tables tests read; a full disk and an
unwritable path."""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import importlib
import io
import json
import os
import pickle
import runpy
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from repro.catalogue import select
from repro.ledger import Expectation, expectation_for, ledger_path, load, verdicts_of
from repro.source_checks import installed_torch_root

ROOT = Path(__file__).resolve().parents[1]

SLOW_BUGS = tuple(select([], slow=False).skipped)  # the default run leaves out all their scenarios


A_BUG = "full-backward-hook-flag"  # data: a catalogued bug, where a test needs one and any would do


@functools.cache
def expected(bug_id: str = A_BUG) -> Expectation:
    """What the ledger in use (``REPRO_LEDGER``, else the shipped one) expects of one bug on the
    installed torch: every test that asserts a bug follows it, so the suite flips when the ledger does."""
    import torch

    return expectation_for(load(ledger_path()), torch.__version__, bug_id)


def write_ledger(path: Path, fixed_in: str | None = None, releases: dict | None = None) -> Path:
    path.write_text(json.dumps({"schema": 1, "fixed_in": fixed_in, "releases": releases or {}}))
    return path


def flag(entry: dict[str, Any]) -> dict[str, Any]:
    """The original bug's verdicts ({"static", "dynamic"}) in a schema-2 release entry (ledger or tracker JSON)."""
    return verdicts_of(entry, A_BUG)


def write_fixed_ledger(path: Path, torch_version: str) -> Path:
    """A ledger saying the installed release is fixed: ``fixed_in`` and its confirmed result agree."""
    key = Version(torch_version).public
    return write_ledger(path, fixed_in=key, releases={key: {"dynamic": {"verdict": "fixed"}}})


def patched_torch_env(directory: Path, sources: dict[str, str]) -> dict[str, str]:
    """An environment in which every Python process, xdist workers and grandchildren included,
    imports ``sources`` (path -> text, e.g. ``torch/jit/_script.py``) in place of the installed
    torch files, as a ``.pth`` file in site-packages would: a ``sitecustomize`` on PYTHONPATH
    installs ``repro.filing.source_import``'s finder before anything imports torch."""
    tree = directory / "torch-sources"
    for path, text in sources.items():
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).write_text(text, encoding="utf-8")
    (directory / "sitecustomize.py").write_text(  # for the torch it was made for, not one that shadows it
        "from pathlib import Path\n"
        "from repro.filing.source_import import import_from\n"
        "import importlib.util\n"
        "spec = importlib.util.find_spec('torch')\n"
        f"if spec and spec.origin and Path(spec.origin).parent.parent == Path({str(installed_torch_root())!r}):\n"
        f"    import_from(Path({str(tree)!r}))\n"
    )
    return {"PYTHONPATH": f"{directory}:{ROOT}"}


def fake_broken_npu(tmp_path: Path) -> dict[str, str]:
    """A torch_npu that torch's backend autoload finds and fails to load as the real one does without CANN."""
    site = tmp_path / "site"
    (site / "torch_npu").mkdir(parents=True)
    (site / "torch_npu" / "__init__.py").write_text(
        "raise ImportError('libhccl.so: cannot open shared object file: No such file or directory')\n"
    )
    info = site / "torch_npu-2.13.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: torch_npu\nVersion: 2.13.0\n")
    (info / "entry_points.txt").write_text("[torch.backends]\ntorch_npu = torch_npu:_autoload\n")
    return {"PYTHONPATH": f"{ROOT}:{site}"}


def run(
    args: list[str],
    *,
    ledger: Path | None = None,
    cwd: Path = ROOT,
    env: dict[str, str] | None = None,
    timeout: float = 120,
    python: str = sys.executable,
) -> subprocess.CompletedProcess:
    """``python ARGS`` with the project importable and, optionally, another ledger or interpreter."""
    inherited = {k: v for k, v in os.environ.items() if k not in ("TORCH_DEVICE_BACKEND_AUTOLOAD", "PYTHONPATH")}
    full_env = {**inherited, "PYTHONPATH": str(ROOT), **(env or {})}  # as from a fresh shell
    # ... but whatever the suite itself runs under (a patched-torch overlay) reaches the child too.
    full_env["PYTHONPATH"] = ":".join(filter(None, [full_env["PYTHONPATH"], os.environ.get("PYTHONPATH")]))
    if ledger is not None:
        full_env["REPRO_LEDGER"] = str(ledger)
    return subprocess.run([python, *args], cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout)


def run_json(args: list[str], **kwargs: Any) -> tuple[int, dict[str, Any]]:
    proc = run([*args, "--json"], **kwargs)
    return proc.returncode, json.loads(proc.stdout)


def run_here(script: Path | str, *args: str) -> tuple[int, str]:
    """A standalone script (a path), or the ``main`` of a module run with -m (a name), run in this
    process with ``args``, where torch is already imported: (exit code, stdout).
    The global module hooks a script registers (and the full/legacy mode they fix for the whole
    process) are undone after, as the next fresh interpreter would start; the fresh-interpreter runs
    are in the slow tier."""
    from torch.nn.modules import module

    out, argv, path = io.StringIO(), sys.argv, list(sys.path)
    saved = {name: copy.copy(value) for name, value in vars(module).items() if name.startswith("_global_")}
    sys.argv = [str(script), *args]
    try:
        with contextlib.redirect_stdout(out):
            if isinstance(script, str):  # runpy cannot load a module through pytest's rewriting hook
                return importlib.import_module(script).main(list(args)), out.getvalue()
            runpy.run_path(str(script), run_name="__main__")
    except SystemExit as exit_:
        return (exit_.code if isinstance(exit_.code, int) else 1), out.getvalue()
    finally:
        sys.argv, sys.path[:] = argv, path
        for name, value in saved.items():
            if isinstance(value, dict):  # torch's functions hold these very objects: restored in place
                getattr(module, name).clear()
                getattr(module, name).update(value)
            else:
                setattr(module, name, value)
    return 0, out.getvalue()


@contextlib.contextmanager
def file_size_limit(limit: int) -> Any:
    """A full disk, as this process sees it: writes past ``limit`` bytes fail with EFBIG (RLIMIT_FSIZE,
    with SIGXFSZ ignored so that the write raises rather than killing the process)."""
    import resource
    import signal

    old_limit = resource.getrlimit(resource.RLIMIT_FSIZE)
    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, old_limit[1]))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, old_limit)
        signal.signal(signal.SIGXFSZ, old_handler)


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[Path]:
    """``path`` (a file or a directory) made unwritable for this process: mode 0555/0444 and, for root
    (which ignores the mode), immutable (``chattr +i``)."""
    mode = stat.S_IMODE(path.stat().st_mode)
    path.chmod(0o555 if path.is_dir() else 0o444)
    immutable = os.geteuid() == 0
    try:
        if immutable and (shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(path)]).returncode):
            pytest.skip("running as root, and chattr +i is unavailable: root writes whatever the mode")
        yield path
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(path)])
        path.chmod(mode)


def copy_of_the_compiled_module(module: Any) -> Any:
    """The ``repro.workaround.shallow_copy`` shipped until 2026-12-05, kept as a broken fix: the compiled
    module copied rather than shared, so a parameter re-assigned on either reaches only that one."""
    clone = object.__new__(type(module))
    clone.__dict__.update(module.__dict__)
    clone.__dict__["_actual_script_module"] = copy.copy(module.__dict__["_actual_script_module"])
    return clone


SHARED_BY_WORKERS: list[Path] = []  # conftest puts here the folder this session's xdist workers share


@functools.cache
def proof_of(bug_id: str) -> Any:
    """``repro.proof.prove`` of a catalogued bug as the catalogue declares it, made once per test session:
    a proof is seconds of ScriptModule building, and several tests read the same one (a frozen ``Proof``),
    often on another xdist worker, which reads the first one's results from the folder they share."""
    from repro.catalogue import BUGS, proof_runs
    from repro.engine.oracle import ScenarioResult
    from repro.proof import Proof, prove

    bug = BUGS[bug_id]
    path = SHARED_BY_WORKERS[0] / f"proof-{bug_id}.pickle" if SHARED_BY_WORKERS else None
    if path is not None and path.exists():
        by_key = {s.key: s for s, _ in proof_runs(bug)}
        runs, absent, torch_version = pickle.loads(path.read_bytes())
        return Proof(bug, [ScenarioResult(by_key[key], *rest) for key, *rest in runs], absent, torch_version)
    proof = prove(bug)
    if path is not None:
        fields = [(r.scenario.key, *(getattr(r, f.name) for f in dataclasses.fields(r)[1:])) for r in proof.results]
        written = path.with_suffix(f".{os.getpid()}")
        written.write_bytes(pickle.dumps((fields, proof.absent, proof.torch)))
        os.replace(written, path)  # whole or absent for a worker reading it
    return proof


HEAVY_PROOF_RUNS = 5  # (scenario, style) pairs: above, a proof takes seconds (the quick suite's 60 s)


def first_quick(params: Iterable[Any]) -> list[Any]:
    """``params`` (values, tuples of several argnames' values, or ``pytest.param``s), all but the first
    in the slow tier: for a check that costs about half a second per case, the quick suite keeps one
    case (its 60 s floor) and CI runs every one."""
    sets = [p if hasattr(p, "marks") else pytest.param(*(p if isinstance(p, tuple) else (p,))) for p in params]
    return sets[:1] + [pytest.param(*p.values, marks=[*p.marks, pytest.mark.slow], id=p.id) for p in sets[1:]]


def proof_params(bug_ids: list[str]) -> list[Any]:
    """``bug_ids`` as pytest parameters, those whose proof is heavy in the slow tier: more than
    ``HEAVY_PROOF_RUNS`` runs of its space, or a scenario of the slow tier (dynamo) among them. The
    quick suite keeps the light ones; ``-m slow`` (and CI) proves every one."""
    from repro.catalogue import BUGS, proof_runs
    from repro.vocabulary import Tier

    def heavy(bug_id: str) -> bool:
        runs = proof_runs(BUGS[bug_id])
        return len(runs) > HEAVY_PROOF_RUNS or any(s.tier == Tier.SLOW for s, _ in runs)

    return [pytest.param(b, marks=pytest.mark.slow) if heavy(b) else b for b in bug_ids]
