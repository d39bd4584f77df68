"""The person at the keyboard: prompts on stdin/stdout, colour only on a terminal."""

from __future__ import annotations

import re
import sys
import time
from dataclasses import dataclass
from typing import Callable, TextIO

_STYLES = (
    (re.compile(r"^## .*$", re.M), "bold"),
    (re.compile(r"^(Merges|Conflicts|Prune|Restore|Retire|Left alone) \(\d+\):$", re.M), "bold cyan"),
    (re.compile(r"\[mem0:[^\]]+\]"), "dim"),
    (re.compile(r"\[A/B/skip\]|Apply\? \[Y/n\]"), "bold yellow"),
)
PROGRESS_AFTER_SECONDS = 1.0


@dataclass
class Terminal:
    stdin: TextIO
    stdout: TextIO
    stderr: TextIO
    colour: bool

    @classmethod
    def standard(cls) -> "Terminal":
        try:  # an undecodable answer (strict UTF-8 locale) is a wrong answer, asked again, not a crash
            sys.stdin.reconfigure(errors="replace")
        except (AttributeError, ValueError, OSError):
            pass
        return cls(sys.stdin, sys.stdout, sys.stderr, colour=sys.stdout.isatty())

    def write(self, text: str) -> None:
        self.stdout.write(text)
        self.stdout.flush()

    def line(self, text: str) -> None:
        self.write(text + "\n")

    def read_line(self) -> str | None:
        line = self.stdin.readline() if self.stdin else ""
        return None if line == "" else line.rstrip("\r\n")

    def report(self, text: str, *, ends_with_prompt: bool) -> None:
        """The report; when it ends with the Apply? prompt, the cursor waits on that line."""
        tail = " " if ends_with_prompt else "\n"
        if not self.colour:
            self.write(text + tail)
            return
        from rich.console import Console
        from rich.text import Text
        styled = Text(text)
        for pattern, style in _STYLES:
            styled.highlight_regex(pattern, style)
        Console(file=self.stdout, highlight=False, soft_wrap=True).print(styled, end=tail)
        self.stdout.flush()

    def progress(self, label: str) -> Callable[[int, int], None] | None:
        """A progress callback drawn on stderr once work has taken over a second; None when piped."""
        if not self.stderr.isatty():
            return None
        state: dict = {"bar": None, "started": None}

        def update(done: int, total: int) -> None:
            if state["bar"] is None:
                if state["started"] is None:  # the clock starts with the work, not with the callback
                    state["started"] = time.monotonic()
                if time.monotonic() - state["started"] < PROGRESS_AFTER_SECONDS or done >= total:
                    return
                from rich.progress import Progress
                from rich.console import Console
                bar = Progress(transient=True, console=Console(stderr=True))
                bar.start()
                state["bar"] = (bar, bar.add_task(label, total=total))
            bar, task = state["bar"]
            bar.update(task, completed=done, total=total)
            if done >= total:
                bar.stop()
        return update
