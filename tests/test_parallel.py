"""Type groups on two processes (dream/parallel.py): the same results, in the same order, as
one after the other, and the same plans."""

from __future__ import annotations

import multiprocessing
import os
import time

import pytest
from mem0_plugin.dream import parallel


def _square_with_pid(group):
    name, items = group
    time.sleep(0.05)  # long enough for the child to start and take its share
    return name, [x * x for x in items], os.getpid()


GROUPS = [(f"type{i}", list(range(i * 10))) for i in range(7)]


def test_the_results_are_those_of_a_plain_map_and_half_come_from_a_child():
    found = parallel.on_two_processes(_square_with_pid, GROUPS)
    assert [(name, squares) for name, squares, _ in found] == [(name, [x * x for x in items]) for name, items in GROUPS]
    pids = {pid for _, _, pid in found}
    assert os.getpid() in pids and len(pids) == 2  # this process and one child
    assert parallel._job is None  # nothing left behind


def _sleep_by_cost(group):
    name, items = group
    time.sleep(items[0])  # a group's cost, unrelated to its size
    return name, os.getpid(), time.monotonic()


def test_a_process_that_is_free_takes_the_next_group():
    # The largest group is the quickest: a split fixed in advance by size (the largest on one
    # side, the rest on the other) would end one process 1.1 s after the other; taking the
    # next group when free ends them within about one small group of each other.
    groups = [("quick", [0.05] * 9), ("slow", [0.6] * 3), ("a", [0.3] * 2), ("b", [0.3])]
    found = parallel.on_two_processes(_sleep_by_cost, groups)
    assert [name for name, _, _ in found] == ["quick", "slow", "a", "b"]
    last_end: dict[int, float] = {}
    for _, pid, ended in found:
        last_end[pid] = max(ended, last_end.get(pid, 0.0))
    assert len(last_end) == 2
    assert abs(max(last_end.values()) - min(last_end.values())) < 0.45


def _fail_on_type3(group):
    if group[0] == "type3":
        raise ValueError("bad group")
    return group[0]


def test_an_error_in_either_process_reaches_the_caller():
    with pytest.raises(ValueError, match="bad group"):
        parallel.on_two_processes(_fail_on_type3, GROUPS)
    assert parallel._job is None


def test_without_fork_the_groups_are_analysed_here(monkeypatch):
    def no_fork(method):
        raise ValueError(f"cannot find context for {method!r}")

    monkeypatch.setattr(multiprocessing, "get_context", no_fork)
    found = parallel.on_two_processes(_square_with_pid, GROUPS)
    assert {pid for _, _, pid in found} == {os.getpid()}
    assert [name for name, _, _ in found] == [name for name, _ in GROUPS]


def test_it_is_used_only_for_large_analyses(monkeypatch):
    assert not parallel.worth_it(parallel.PARALLEL_FROM - 1)
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert not parallel.worth_it(parallel.PARALLEL_FROM)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert parallel.worth_it(parallel.PARALLEL_FROM)


PARENT = os.getpid()


def _die_in_the_child(group):
    if os.getpid() != PARENT:
        os._exit(9)  # as a child killed by the kernel would
    return group[0]


def test_a_child_that_dies_costs_only_time():
    assert parallel.on_two_processes(_die_in_the_child, GROUPS) == [name for name, _ in GROUPS]
    assert parallel._job is None


def test_a_counter_left_locked_by_a_dead_child_ends_the_taking(monkeypatch):
    monkeypatch.setattr(parallel, "CLAIM_TIMEOUT", 0.05)
    counter = parallel.Counter(multiprocessing.get_context("fork"))
    job = parallel._Job(_square_with_pid, GROUPS, list(range(len(GROUPS))), counter)
    assert job.claim() == 0
    counter.lock.acquire()  # as a child killed while it held the lock would leave it
    assert job.claim() is None  # the caller then does the groups nobody returned
