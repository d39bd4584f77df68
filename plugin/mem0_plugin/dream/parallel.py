"""Type groups analysed on two processes (docs/dream.md, "Scale").

`analysis.analyse` finds each type group's merges and conflicts on its own
(`per_type.type_actions`); `on_two_processes` is the map it can be given to spread those
groups over two processes: a forked child takes about half of the work (the largest groups
first, each to the lighter side) while this process does the rest, and the child sends back
its results (actions and pair decisions, no memories). Forking shares the memories and
vectors already read without copying or sending them.

Used by the pipeline from `PARALLEL_FROM` memories on, on a machine with two cores or more:
below that, starting a process costs more than it saves. Where fork is not available (or a
process cannot be started), the groups are analysed here one after the other: the results
are the same either way, in the same order.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

PARALLEL_FROM = 30_000  # memories

_job: tuple[Callable[[Any], Any], Sequence[Any]] | None = None  # what the forked child reads


def worth_it(memory_count: int) -> bool:
    return memory_count >= PARALLEL_FROM and (os.cpu_count() or 1) >= 2


def on_two_processes(work: Callable[[Any], Any], groups: Sequence[Any]) -> list[Any]:
    """`[work(group) for group in groups]`, about half of it computed by a forked child. A child
    that dies (killed, out of memory) costs only time: its groups are then computed here."""
    global _job
    if len(groups) < 2:
        return [work(group) for group in groups]
    mine, theirs = _halves([_weight(group) for group in groups])
    try:
        context = multiprocessing.get_context("fork")
        _job = (work, groups)
        pool = ProcessPoolExecutor(max_workers=1, mp_context=context)
        pending = pool.submit(_run, theirs)  # forks now: the child sees `_job`
    except (OSError, ValueError):
        _job = None
        return [work(group) for group in groups]
    results: dict[int, Any] = {}
    try:
        results.update((index, work(groups[index])) for index in mine)
        try:
            results.update(zip(theirs, pending.result()))
        except BrokenProcessPool:
            results.update((index, work(groups[index])) for index in theirs)
    finally:
        _job = None
        pool.shutdown(wait=True, cancel_futures=True)
    return [results[index] for index in range(len(groups))]


def _run(indices: list[int]) -> list[Any]:
    assert _job is not None
    work, groups = _job
    return [work(groups[index]) for index in indices]


def _weight(group: Any) -> int:
    """A group's size: (name, items) pairs weigh their items."""
    return len(group[1]) if isinstance(group, tuple) and len(group) == 2 else 1


def _halves(weights: list[int]) -> tuple[list[int], list[int]]:
    """Indices for this process and for the child: the heaviest first, each to the lighter side."""
    sides: tuple[list[int], list[int]] = ([], [])
    load = [0, 0]
    for index in sorted(range(len(weights)), key=lambda i: -weights[i]):
        side = 0 if load[0] <= load[1] else 1
        sides[side].append(index)
        load[side] += weights[index]
    return sides
