"""Sharing work with forked copies: the results of one process, in order, whatever a copy does."""

from __future__ import annotations

import os
import time

import pytest

from helpers import first_quick
from repro.engine import forked

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")
ITEMS = list(range(11))


def _doubled(share):
    return [item * 2 for item in share]


@pytest.mark.parametrize("processes", [1, 2, 3, 4])
def test_shared_work_comes_back_in_the_items_order(processes):
    assert forked.shared(_doubled, ITEMS, processes) == _doubled(ITEMS)


def test_each_copy_does_a_share_and_calls_its_setup_first():
    here = os.getpid()

    def where(share):
        return [(item, os.getpid() == here, os.environ.get("SET_UP_IN_COPY")) for item in share]

    done = forked.shared(where, ITEMS, 2, lambda: os.environ.update(SET_UP_IN_COPY="yes"))
    assert [item for item, _, _ in done] == ITEMS
    assert {(item % 2, local, setup) for item, local, setup in done} == {(0, True, None), (1, False, "yes")}


@pytest.mark.parametrize(
    "misbehave",
    first_quick(
        [
            lambda: os._exit(3),  # a crash
            lambda: os.kill(os.getpid(), 9),  # killed
            lambda: [][0],  # raises: the copy exits non-zero
            lambda: time.sleep(60),  # hangs: past its deadline
        ]
    ),
    ids=["exits", "killed", "raises", "hangs"],
)
def test_a_copy_that_fails_has_its_share_done_here(monkeypatch, misbehave):
    monkeypatch.setattr(forked, "PATIENCE", 0.0)
    monkeypatch.setattr(forked, "GRACE_S", 0.5)
    here = os.getpid()

    def work(share):
        if os.getpid() != here:
            misbehave()
        return _doubled(share)

    started = time.monotonic()
    assert forked.shared(work, ITEMS, 2) == _doubled(ITEMS)
    assert time.monotonic() - started < 10  # the hanging copy was not waited for


def test_a_copy_answering_the_wrong_number_of_results_is_not_believed():
    here = os.getpid()

    def work(share):
        return _doubled(share) if os.getpid() == here else [0]

    assert forked.shared(work, ITEMS, 3) == _doubled(ITEMS)


@pytest.mark.parametrize(
    ("device", "wanted", "expected"),
    [("cuda", "", 1), ("npu", "", 1), ("cpu", "1", 1), ("cpu", "3", 3), ("cuda", "2", 2)],
)
def test_processes_are_one_on_an_accelerator_unless_set(monkeypatch, device, wanted, expected):
    monkeypatch.setenv("REPRO_PROCESSES", wanted)
    assert forked.usable_processes(device) == expected


def test_processes_on_cpu_are_the_usable_cores_up_to_the_cap(monkeypatch):
    monkeypatch.delenv("REPRO_PROCESSES", raising=False)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    assert forked.usable_processes("cpu") == min(cores, forked.MAX_PROCESSES)
