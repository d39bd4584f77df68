"""Type groups analysed on two processes (docs/dream.md, "Scale").

`analysis.analyse` finds each type group's merges and conflicts on its own
(`per_type.type_actions`); `on_two_processes` is the map it can be given to spread those
groups over two processes: a forked child and this process take the groups one at a time,
the largest first, from a shared counter, so each takes the next group as soon as it is
free (the groups' costs are not known in advance: two groups of one size can differ by half)
and the child sends back its results (actions and pair decisions, no memories). Forking
shares the memories and vectors already read without copying or sending them.

Used by the pipeline from `PARALLEL_FROM` memories on, on a machine with two cores or more:
below that, starting a process costs more than it saves. Where fork is not available (or a
process cannot be started), the groups are analysed here one after the other; a group the
child took but did not send back (it died) is analysed here too. The results are the same
either way, in the same order.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

PARALLEL_FROM = 30_000  # memories
CLAIM_TIMEOUT = 10.0  # seconds: a counter locked longer than this was locked by a child that died


class Counter:
    """A shared integer (shared memory: a forked child sees and moves the same one) and the lock
    that guards it, a plain one: this process cannot take it twice."""

    def __init__(self, context: Any):
        self.value = context.RawValue("q", 0)
        self.lock = context.Lock()


@dataclass
class _Job:
    """What the forked child reads: the work, the groups, the order they are taken in and the
    shared counter (the position in `order` of the next group to take)."""

    work: Callable[[Any], Any]
    groups: Sequence[Any]
    order: list[int]
    taken: Counter

    def claim(self) -> int | None:
        """The index of the next group nobody took, or None when there is none left (or the
        counter cannot be locked: its holder died; the caller's leftovers are then done here)."""
        if not self.taken.lock.acquire(timeout=CLAIM_TIMEOUT):
            return None
        try:
            position = self.taken.value.value
            if position >= len(self.order):
                return None
            self.taken.value.value = position + 1
            return self.order[position]
        finally:
            self.taken.lock.release()

    def close(self) -> None:
        """Leave nothing more to take (after an error here: the child stops after its group)."""
        if self.taken.lock.acquire(timeout=CLAIM_TIMEOUT):
            self.taken.value.value = len(self.order)
            self.taken.lock.release()

    def run_claimed(self) -> dict[int, Any]:
        results = {}
        while (index := self.claim()) is not None:
            results[index] = self.work(self.groups[index])
        return results


_job: _Job | None = None  # what the forked child reads


def worth_it(memory_count: int) -> bool:
    return memory_count >= PARALLEL_FROM and (os.cpu_count() or 1) >= 2


def on_two_processes(work: Callable[[Any], Any], groups: Sequence[Any]) -> list[Any]:
    """`[work(group) for group in groups]`, part of it computed by a forked child. A child that
    dies (killed, out of memory) costs only time: its groups are then computed here."""
    global _job
    if len(groups) < 2:
        return [work(group) for group in groups]
    order = sorted(range(len(groups)), key=lambda i: -_weight(groups[i]))
    try:
        context = multiprocessing.get_context("fork")
        _job = _Job(work, groups, order, Counter(context))
        pool = ProcessPoolExecutor(max_workers=1, mp_context=context)
        pending = pool.submit(_run)  # forks now: the child sees `_job`
    except (OSError, ValueError):
        _job = None
        return [work(group) for group in groups]
    job = _job
    try:
        results = job.run_claimed()
        try:
            results.update(pending.result())
        except BrokenProcessPool:
            pass  # what the child took is done below
        results.update((index, work(groups[index])) for index in order if index not in results)
    finally:
        job.close()
        _job = None
        pool.shutdown(wait=True, cancel_futures=True)
    return [results[index] for index in range(len(groups))]


def _run() -> dict[int, Any]:
    assert _job is not None
    return _job.run_claimed()


def _weight(group: Any) -> int:
    """A group's size: (name, items) pairs weigh their items."""
    return len(group[1]) if isinstance(group, tuple) and len(group) == 2 else 1
