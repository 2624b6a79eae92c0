"""A Ctrl-C during a scenario, or while torch loads, stops the run, whatever caught it on the way.

TorchScript's interpreter turns a ``KeyboardInterrupt`` raised in Python code it calls (a hook, an
``@torch.jit.ignore`` function) into its own ``RuntimeError`` ("KeyboardInterrupt: <EMPTY MESSAGE>"),
which the oracle, or a scenario that catches what a call raises, would record as the ScriptModule's
error: the run went on and ended 0 with a report (seen in tests/test_interrupt.py). While a scenario
runs, the SIGINT handler notes the signal before doing what it did; the interrupt is raised again
once the scenario is over. torch's own import swallows one too: it imports numpy from C++
(``is_numpy_available``, torch/csrc/utils/tensor_numpy.cpp) and turns any error, a
``KeyboardInterrupt`` included, into the warning "Failed to initialize NumPy"; a run interrupted
there went on without numpy and ended 0, or 1 with drift, saying nothing of the Ctrl-C.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


@contextmanager
def kept() -> Iterator[None]:
    """Raises ``KeyboardInterrupt`` on leaving the block if SIGINT arrived inside it (main thread only:
    no other thread receives signals or may set a handler)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    arrived: list[int] = []

    def noted(signum: int, frame: FrameType | None) -> None:
        arrived.append(signum)
        if callable(previous):
            previous(signum, frame)
        elif previous != signal.SIG_IGN:  # SIG_DFL, or a handler not set from Python
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, noted)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if arrived:
        raise KeyboardInterrupt
