"""Step 5's conversation: A/B/skip for each conflict, then Apply? [Y/n] once (docs/dream.md,
"Step 5: confirm and apply"). An answer that is none of those is answered with the valid ones,
then the question is asked again."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .plan import Plan
from .report import APPLY_HINT, APPLY_PROMPT, CONFLICT_HINT, conflict_prompt

ReadLine = Callable[[], "str | None"]  # None at end of input
Write = Callable[[str], None]

YES = ("", "y", "yes")
NO = ("n", "no")


@dataclass(frozen=True)
class Decision:
    apply: bool
    resolutions: dict[str, str]


def ask_conflicts(plan: Plan, read: ReadLine, write: Write) -> dict[str, str]:
    """A, B or skip per conflict (case-insensitive; empty or end of input = skip; else the hint,
    and ask again)."""
    resolutions: dict[str, str] = {}
    total = len(plan.conflicts)
    for index, conflict in enumerate(plan.conflicts, 1):
        while True:
            write(conflict_prompt(index, total, conflict))
            answer = read()
            choice = "skip" if answer is None else answer.strip().lower()
            if answer is None:
                write("\n")
            if choice in ("a", "b"):
                resolutions[conflict.ids[0]] = choice.upper()
                break
            if choice in ("", "skip"):
                resolutions[conflict.ids[0]] = "skip"
                break
            write(CONFLICT_HINT + "\n")
    return resolutions


def ask_apply(read: ReadLine, write: Write, *, prompt: bool) -> bool:
    """Yes (Y, yes, empty) or no (n, no); anything else gets the hint and asks again; end of
    input is no."""
    if prompt:
        write(APPLY_PROMPT)
    while True:
        answer = read()
        if answer is None:
            write("\n")
            return False
        choice = answer.strip().lower()
        if choice in YES:
            return True
        if choice in NO:
            return False
        write(APPLY_HINT + "\n" + APPLY_PROMPT)


def confirm(plan: Plan, read: ReadLine, write: Write) -> Decision:
    """With conflicts, ask each of them, then `Apply? [Y/n]`; without, the report already ended
    with that question (`report_pieces(plan, asking=not plan.conflicts)`)."""
    resolutions = ask_conflicts(plan, read, write) if plan.conflicts else {}
    return Decision(ask_apply(read, write, prompt=bool(plan.conflicts)), resolutions)
