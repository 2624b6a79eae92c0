"""Material for an upstream issue, gathered on this machine: the bug's paste-ready script and what
running exactly that script printed (as ``python bug.py`` prints it), the versions block PyTorch's bug template
asks for, and, for a bug with catalogued fixes, the proposed patch and the verdicts of the
upstream-side candidates. Local paths are shortened wherever they would show (tracebacks, versions)."""

from __future__ import annotations

import os
import re
import runpy
import signal
import subprocess
import sys
import tempfile
import traceback
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from repro.catalogue.bug import Bug
from repro.filing.candidates import CandidateResult, judge_all, start_apart

# As this tool imports torch (repro.environment): a torch_npu without CANN must not stop the script at import.
NO_BACKEND_AUTOLOAD = {"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}
SCRIPT_NAME = "bug.py"  # what the pasted script is called in the traceback readers see


@dataclass(frozen=True)
class Filing:
    bug: Bug
    output: str  # what the paste-ready script printed (its traceback included), paths shortened
    exit_code: int
    versions: str
    patch: str | None = None  # a bug with fixes: the proposed upstream diff for this torch
    candidates: list[CandidateResult] = field(default_factory=list)  # a bug with fixes: upstream side


class ScriptRun:
    """The paste-ready script, run as ``bug.py`` in a folder of its own, with warnings off.

    Where ``os.fork`` exists, in a copy of this process forked once it has imported torch, and before it
    ran anything else: the script's own ``import torch`` is then already done, one import of torch fewer
    beside the issue body's other processes (measured by benchmarks/bench_repro.py, docs/development.md).
    The copy runs the script as ``python bug.py`` would (its own
    ``__main__``, ``sys.argv``, ``SystemExit`` and exit code 1 with the traceback on an error, with no
    frame of this tool in it). Elsewhere, a fresh interpreter runs it."""

    def __init__(self, bug: Bug) -> None:
        self._folder = tempfile.TemporaryDirectory(prefix="repro-issue-")
        (Path(self._folder.name) / SCRIPT_NAME).write_text(bug.paste, encoding="utf-8")
        self._output: Future[str] | None = None
        self._pid = 0
        self._proc: subprocess.Popen | None = None

    def start(self) -> None:
        """Run it (torch is imported in this process: a fork inherits that)."""
        if not hasattr(os, "fork"):
            self._proc = subprocess.Popen(
                [sys.executable, SCRIPT_NAME],
                cwd=self._folder.name,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                env={**os.environ, "PYTHONWARNINGS": "ignore", **NO_BACKEND_AUTOLOAD},
            )
            return
        read, write = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        self._pid = os.fork()
        if self._pid == 0:  # the copy: never returns
            os.close(read)
            _run_script_here(self._folder.name, write)
        os.close(write)
        pool = ThreadPoolExecutor(max_workers=1)
        self._output = pool.submit(_read_all, read)
        pool.shutdown(wait=False)

    def result(self) -> tuple[str, int]:
        """What it printed (paths shortened) and its exit code."""
        if self._proc is not None:
            output, _ = self._proc.communicate(timeout=300)
            code = self._proc.returncode
        else:
            assert self._output is not None, "start() comes first"
            output = self._output.result(timeout=300)
            code = os.waitstatus_to_exitcode(os.waitpid(self._pid, 0)[1])
            self._pid = 0
        folder = self._folder.name
        output = output.replace(f"{Path(folder).resolve()}/", "").replace(f"{folder}/", "")
        self._folder.cleanup()
        return shorten(output.strip()), code

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        if self._pid:
            os.kill(self._pid, signal.SIGKILL)
            os.waitpid(self._pid, 0)
            self._pid = 0
        self._folder.cleanup()


def _read_all(fd: int) -> str:
    with os.fdopen(fd, "rb") as pipe:
        return pipe.read().decode("utf-8", errors="replace")


def _run_script_here(folder: str, write: int) -> NoReturn:
    """In the forked copy: ``python bug.py`` in ``folder``, its output (stdout and stderr, as one) into
    ``write``, then exit with its status."""
    status = 1
    try:
        os.dup2(write, 1)
        os.dup2(write, 2)
        os.close(write)
        # buffered as a fresh interpreter's are on a pipe (this process's may be a terminal's)
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
        sys.stderr = open(2, "w", encoding="utf-8", buffering=1, errors="backslashreplace", closefd=False)
        os.chdir(folder)
        warnings.simplefilter("ignore")
        sys.argv = [SCRIPT_NAME]
        try:
            runpy.run_path(SCRIPT_NAME, run_name="__main__")
            status = 0
        except SystemExit as exit_:  # as the interpreter ends: None is 0, a number itself, else printed, 1
            if exit_.code is None or isinstance(exit_.code, int):
                status = exit_.code or 0
            else:
                print(exit_.code, file=sys.stderr)
        except BaseException as err:  # the script's error is what it printed
            tb = err.__traceback__
            while tb is not None and tb.tb_frame.f_code.co_filename != SCRIPT_NAME:
                tb = tb.tb_next  # this tool's frames and runpy's: python bug.py shows none
            traceback.print_exception(type(err), err, tb)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)


@dataclass
class HeadStart:
    """What the filing kit runs beside this process's own work: candidates' processes started before it
    imports torch, so that their imports of torch run on another CPU meanwhile, and, once torch is
    imported (``after_torch``), the paste-ready script in a forked copy and a thread gathering
    ``torch.utils.collect_env``'s report (its subprocesses, mostly waiting)."""

    script: ScriptRun | None = None
    candidates: dict[str, subprocess.Popen] = field(default_factory=dict)
    versions: Future[str] | None = None

    def after_torch(self) -> None:
        """Once this process has imported torch: run the script in a copy of it, then start gathering the
        versions block (a thread: the copy is forked before it starts)."""
        if self.script:
            self.script.start()
        pool = ThreadPoolExecutor(max_workers=1)
        self.versions = pool.submit(collect_env)
        pool.shutdown(wait=False)

    def stop(self) -> None:
        """End whatever is still running (an early exit, an error): no process outlives the command."""
        if self.script:
            self.script.stop()
        for proc in self.candidates.values():
            if proc.poll() is None:
                proc.kill()
                proc.communicate()


def head_start(bug: Bug, device: str, slow: bool = False, script: bool = True) -> HeadStart:
    """Start ``bug``'s candidates that need a process of their own (``slow``: judged on every scenario)
    and, with ``script`` (for an issue body), prepare its paste-ready script (``after_torch`` runs it)."""
    return HeadStart(ScriptRun(bug) if script else None, start_apart(bug, device, slow, beside=script))


def gather(
    bug: Bug,
    torch_npu_status: str,
    device: str,
    progress: Callable[[str], None],
    started: HeadStart,
    slow: bool = False,
    unpatched: Sequence[Any] = (),
) -> Filing:
    """Everything the issue body shows, from what ``started`` runs and from this process: this process's
    own work first, then what waits on the others (``unpatched``: the report's runs, the candidates'
    baseline)."""
    assert started.script and started.versions, "head_start(bug) and after_torch() come first"
    patch = _patch(bug)
    # an upstream issue weighs upstream fixes; the user-side ones (this project's helper, a declaration in
    # the user's class) are for --candidates
    candidates = judge_all(bug, device, progress, started.candidates, slow, ("upstream",), unpatched)
    output, exit_code = started.script.result()
    return Filing(
        bug, output, exit_code, shorten(versions(started.versions.result(), torch_npu_status)), patch, candidates
    )


def shorten(text: str) -> str:
    """No home, venv or temporary paths in what is pasted upstream: ``.../site-packages/torch/...``."""
    text = re.sub(r"(?:/[^\s\"'/]+)+/(site-packages|dist-packages)/", r".../\1/", text)
    home = str(Path.home())
    return text.replace(home, "~") if home not in ("/", "") else text


def _patch(bug: Bug) -> str:
    from repro.filing.upstream_patch import PatchError, proposed_diff

    try:
        return proposed_diff(bug)
    except PatchError as problem:
        return f"(no patch for this torch: {problem})"


def collect_env() -> str:
    """``torch.utils.collect_env``'s report. Torch must be imported already (``import_torch``, which
    swaps the warning filters, is not for a second thread)."""
    from torch.utils.collect_env import get_pretty_env_info

    return get_pretty_env_info()


def versions(text: str, torch_npu_status: str) -> str:
    """The versions block: ``collect_env``'s ``text``, plus torch_npu and CANN, which it does not cover."""
    if torch_npu_status != "not installed":
        text += f"\n\ntorch_npu: {torch_npu_status}\nCANN: {cann_version()}"
    return text


def cann_version() -> str:
    bases = [
        os.environ.get("ASCEND_TOOLKIT_HOME"),
        os.environ.get("ASCEND_HOME_PATH"),
        "/usr/local/Ascend/ascend-toolkit/latest",
    ]
    for base in filter(None, bases):
        for info in [*Path(base).glob("*/ascend_toolkit_install.info"), Path(base) / "version.cfg"]:
            if info.is_file():
                for line in info.read_text(errors="replace").splitlines():
                    if line.strip().startswith("version="):
                        return line.split("=", 1)[1].strip()
    return "not found"
