"""Progress bars on stderr, drawn by rich's `Progress` only when stderr is a terminal and
erased when the work ends, so piped output and logs never carry one.

* `counting(label)`: a callback ``update(done, total)`` for work counted in items (reading
  memories, embedding them). Its bar appears only once the work has taken more than
  `SHOW_AFTER_SECONDS`, so a quick step shows nothing.
* `downloading(label, total)`: a context manager that yields ``advance(byte_count)`` for a
  download (the model files), drawn at once with size and speed.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from rich.progress import Progress

SHOW_AFTER_SECONDS = 1.0
Update = Callable[[int, int], None]


def _bar(stream: TextIO, *columns: Any) -> Progress:
    from rich.console import Console
    from rich.progress import Progress

    return Progress(*columns, transient=True, console=Console(file=stream))


class _CountingBar:
    """The bar behind `counting`: created on the first update that comes a second after
    the first one, stopped when `done` reaches `total`."""

    def __init__(self, label: str, stream: TextIO):
        self.label, self.stream = label, stream
        self.started: float | None = None  # the clock starts with the work, not with the callback
        self.shown: tuple[Progress, Any] | None = None  # (the bar, its task)

    def __call__(self, done: int, total: int) -> None:
        if self.shown is None:
            now = time.monotonic()
            if self.started is None:
                self.started = now
            if now - self.started < SHOW_AFTER_SECONDS or done >= total:
                return
            bar = _bar(self.stream)
            bar.start()
            self.shown = (bar, bar.add_task(self.label, total=total))
        bar, task = self.shown
        bar.update(task, completed=done, total=total)
        if done >= total:
            bar.stop()


def counting(label: str, stream: TextIO | None = None) -> Update | None:
    """A progress callback drawn on `stream` (stderr); None when it is not a terminal."""
    stream = stream if stream is not None else sys.stderr
    return _CountingBar(label, stream) if stream.isatty() else None


@contextmanager
def downloading(label: str, total: int | None) -> Iterator[Callable[[int], None]]:
    """``advance(byte_count)`` for each block received (`total` None when the size is unknown)."""
    if not sys.stderr.isatty():
        yield lambda byte_count: None
        return
    from rich.progress import BarColumn, DownloadColumn, TextColumn, TransferSpeedColumn

    with _bar(sys.stderr, TextColumn(label), BarColumn(), DownloadColumn(), TransferSpeedColumn()) as bar:
        task = bar.add_task(label, total=total)
        yield lambda byte_count: bar.advance(task, byte_count)
