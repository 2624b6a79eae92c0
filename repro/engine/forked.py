"""Share a list of work between this process and forked copies of it: one share per core.

A fork inherits ``import torch`` (1.4 s anew) and every TorchScript class compiled so far, so on two
cores the scenario runs take half the wall time. Each item's result must not depend on where it ran:
``tests/engine/test_oracle.py`` compares a run in one process with runs in two and three, run for run.
Where a copy cannot be made (no ``os.fork``), fails (a crash, an unreadable answer) or hangs (a lock
another thread held at the fork: the copy has no answer long after this process finished its own
share) its share runs here instead: a fork only ever saves time, it never loses a result.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import pickle
import select
import signal
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

MAX_PROCESSES = 4  # each copy holds torch's memory pages once it writes to them
PATIENCE = 5.0  # a copy may take this many times as long as this process's share (plus GRACE_S) ...
GRACE_S = 30.0  # ... before its share is done here instead
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def setting_problem() -> str:
    """What is wrong with ``REPRO_PROCESSES`` (one sentence), or "": a value it cannot use is refused at
    start rather than ignored."""
    wanted = os.environ.get("REPRO_PROCESSES", "")
    if wanted == "" or (wanted.isdigit() and int(wanted) > 0):
        return ""
    return f"REPRO_PROCESSES must be a number of processes, 1 or more, not {wanted[:20]!r}"


def usable_processes(device: str) -> int:
    """How many processes share a run: one per usable core (at most ``MAX_PROCESSES``) on CPU; one on an
    accelerator (CUDA cannot be used again in a forked child), without ``os.fork``, or where
    ``REPRO_PROCESSES`` says how many."""
    wanted = os.environ.get("REPRO_PROCESSES", "")
    if wanted.isdigit() and int(wanted) > 0:
        return int(wanted)
    if device != "cpu" or not hasattr(os, "fork"):
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(cores, MAX_PROCESSES))


def shared(
    work: Callable[[Sequence[Item]], list[Result]],
    items: Sequence[Item],
    processes: int,
    in_copy: Callable[[], object] = lambda: None,
) -> list[Result]:
    """``work(items)``, with ``items[k::processes]`` done by the k-th forked copy (k >= 1), which first
    calls ``in_copy``, and the first share here; ``work`` returns one result per item, and the results
    come back in ``items``' order."""
    if processes <= 1 or len(items) < 2 or not hasattr(os, "fork"):
        return work(items)
    shares = [items[k::processes] for k in range(processes)]
    children: list[_Child] = []
    try:
        children += [_start(work, share, in_copy) for share in shares[1:]]
        started = time.monotonic()
        done = [work(shares[0])]
        deadline = time.monotonic() + PATIENCE * (time.monotonic() - started) + GRACE_S
        done += [_finish(child, work, share, deadline) for child, share in zip(children, shares[1:])]
    except BaseException:  # Ctrl-C, or an error in this share: no copy outlives this process's run
        _end(children)
        raise
    return [done[position % processes][position // processes] for position in range(len(items))]


def _end(children: list[_Child]) -> None:
    """Kill and reap the copies still running (a reaped one is gone already)."""
    for pid, _ in children:
        if pid:
            with contextlib.suppress(ChildProcessError, ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)


_Child = tuple[int, int]  # (pid, the read end of its pipe), or (0, -1) where no copy was made


def _start(
    work: Callable[[Sequence[Item]], list[Result]], share: Sequence[Item], in_copy: Callable[[], object]
) -> _Child:
    read, write = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read)
        os.close(write)
        return 0, -1
    if pid:
        os.close(write)
        return pid, read
    os.close(read)  # the copy: do its share, write the results, and leave without running exit handlers
    code = 1
    try:
        _die_with_parent()
        in_copy()
        with os.fdopen(write, "wb") as out:
            pickle.dump(work(share), out, protocol=pickle.HIGHEST_PROTOCOL)
        code = 0
    finally:
        os._exit(code)


def _die_with_parent() -> None:
    """On Linux, the copy is killed when this process dies, even by SIGKILL (``PR_SET_PDEATHSIG``);
    elsewhere ``_end`` covers every way out that runs Python."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _finish(
    child: _Child, work: Callable[[Sequence[Item]], list[Result]], share: Sequence[Item], deadline: float
) -> list[Result]:
    """The copy's results, or the share done here if the copy was not made, failed or is past ``deadline``."""
    pid, read = child
    if not pid:
        return work(share)
    data, complete = _read_until(read, deadline)
    if not complete:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    try:
        results = pickle.loads(data) if complete and os.waitstatus_to_exitcode(status) == 0 else None
    except Exception:
        results = None
    if not isinstance(results, list) or len(results) != len(share):
        return work(share)
    return results


def _read_until(read: int, deadline: float) -> tuple[bytes, bool]:
    """Everything written to the pipe ``read`` until its other end closes (True), or until ``deadline``."""
    chunks: list[bytes] = []
    with os.fdopen(read, "rb", buffering=0) as pipe:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([pipe], [], [], left)[0]:
                return b"".join(chunks), False
            chunk = pipe.read(1 << 16)
            if not chunk:
                return b"".join(chunks), True
            chunks.append(chunk)
