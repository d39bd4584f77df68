"""The person at the keyboard: prompts on stdin/stdout, colour only on a terminal."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TextIO

from .. import progress as bars
from ..dream import report as words

STYLES = {  # the roles of `dream.report.report_pieces`
    words.TITLE: "bold",
    words.SECTION: "bold cyan",
    words.REF: "dim",
    words.PROMPT: "bold yellow",
}


@dataclass
class Terminal:
    stdin: TextIO
    stdout: TextIO
    stderr: TextIO
    colour: bool

    @classmethod
    def standard(cls) -> Terminal:
        try:  # an undecodable answer (strict UTF-8 locale) is a wrong answer, asked again, not a crash
            sys.stdin.reconfigure(errors="replace")  # type: ignore[union-attr]
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

    def report(self, pieces: Sequence[words.Piece], *, ends_with_prompt: bool) -> None:
        """The report; when it ends with the Apply? prompt, the cursor waits on that line.
        Piped, its plain characters; on a terminal, the same characters styled by role."""
        tail = " " if ends_with_prompt else "\n"
        if not self.colour:
            self.write(words.plain(pieces) + tail)
            return
        from rich.console import Console
        from rich.text import Text
        from rich.theme import Theme

        console = Console(file=self.stdout, highlight=False, soft_wrap=True, theme=Theme(STYLES))
        console.print(Text.assemble(*pieces), end=tail)
        self.stdout.flush()

    def progress(self, label: str) -> Callable[[int, int], None] | None:
        """A progress callback drawn on stderr once work has taken over a second; None when piped."""
        return bars.counting(label, self.stderr)
