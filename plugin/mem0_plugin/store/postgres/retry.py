"""Write transactions of the PostgreSQL store run again after a conflict (docs/stores.md,
"Conflicts retried").

The server may abort a transaction for a serialization failure (SQLSTATE 40001) or a
deadlock (40P01): nothing of it was applied, and the same work run again from the start may
succeed. `run_with_retries` does that for a whole transaction given as a function
(`PostgresStore.transact`): each attempt reads again what it depends on (the row versions its
conditional writes check, the identical text an add looks for), so a write is never applied
twice and never on a stale read. Nothing else is retried: another error, or a connection lost
(a COMMIT whose answer was lost may have been applied), is raised at once.

Attempts are bounded; the waits between them grow and are jittered (a random share of the
bound), so two writers that collided do not collide again in step. Randomness and the clock
are injected for tests.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from ...errors import WriteConflictError

T = TypeVar("T")

RETRYABLE = frozenset({"40001", "40P01"})  # serialization_failure, deadlock_detected


@dataclass(frozen=True)
class WriteRetry:
    attempts: int = 5  # transactions in all, the first included
    base_seconds: float = 0.02  # the bound of the first wait; each next one doubles
    max_seconds: float = 1.0  # no bound is longer

    def delay(self, attempt: int, draw: Callable[[], float]) -> float:
        """Seconds to wait after failed attempt `attempt` (from 1): "full jitter", a share
        `draw()` in [0, 1) of the exponential bound."""
        return min(self.base_seconds * 2 ** (attempt - 1), self.max_seconds) * draw()


def run_with_retries(
    attempt: Callable[[], T],
    policy: WriteRetry,
    *,
    sleep: Callable[[float], None] = time.sleep,
    draw: Callable[[], float] = random.random,
    retried: Callable[[WriteConflictError], None] | None = None,
) -> T:
    """`attempt()` (one whole transaction), again after a `WriteConflictError`, at most
    `policy.attempts` times; `retried` is told of each conflict that is retried."""
    number = 1
    while True:
        try:
            return attempt()
        except WriteConflictError as conflict:
            if number >= policy.attempts:
                raise
            if retried is not None:
                retried(conflict)
            sleep(policy.delay(number, draw))
            number += 1
