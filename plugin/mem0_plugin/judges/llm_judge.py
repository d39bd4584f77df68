"""A language model as judge (docs/judges.md): mem0's `LlmFactory` builds the model of the `llm:`
section the first time a candidate needs judging (never at start), and each call runs within
a timeout and a budget of calls.

`LlmJudge.answer(candidate, dates)` asks with `answers.messages_for` (a pair, or a synthesis
group with its observations' dates), reads the reply strictly
(`answers.read_answer`: the same check as an agent's answer) and returns the answered
candidate, or None — over its budget of calls or of seconds, resting after a failure, no
model, a call that raised or timed out, an answer refused — and the rules alone decide. A failed call (an exception or the
timeout) puts the judge to rest for `REST_SECONDS`: a model that is down or too slow costs one
timeout, not one per candidate. Nothing here raises: a model that cannot be built is said once
on stderr (``mem0: the language-model judge is off (<reason>)``) and the judge is absent.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..dream.plan import Candidate
from ..mem0_factories import first_line, mem0_factory
from .answers import AnswerRefused, messages_for, read_answer
from .asking import JudgeTally
from .config import JudgeUnavailable, read_settings

if TYPE_CHECKING:
    from .settings import JudgeSettings

REST_SECONDS = 300.0
RESPONSE_FORMAT = {"type": "json_object"}
T = TypeVar("T")
_said: set[str] = set()


def off_notice(reason: str) -> str:
    return f"mem0: the language-model judge is off ({reason}); the rules decide alone"


def say_off(reason: str) -> None:
    """One line on stderr per reason and process."""
    if reason not in _said:
        _said.add(reason)
        print(off_notice(reason), file=sys.stderr)


class JudgeTimeout(Exception):
    pass


def call_within(call: Callable[[], T], seconds: float) -> T:
    """`call()` on a daemon thread, waited for at most `seconds` (then `JudgeTimeout`; the call
    is abandoned: a thread cannot be stopped, and a daemon one does not hold the process)."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:  # handed to the caller below
            box["error"] = exc

    worker = threading.Thread(target=run, name="mem0-judge", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise JudgeTimeout(f"no answer within {seconds:g} s")
    if "error" in box:
        raise box["error"]
    return box["value"]


def build_llm(settings: JudgeSettings) -> Any:
    """The model of the `llm:` section, made by mem0's `LlmFactory` (not called)."""
    provider = settings.llm.provider
    factory = mem0_factory("LlmFactory", JudgeUnavailable, f"llm provider {provider!r}")
    try:
        return factory.create(provider, dict(settings.llm.config))
    except Exception as exc:  # an unknown provider, its package missing, a config it refuses
        raise JudgeUnavailable(f"llm provider {provider!r}: {first_line(exc)}") from None


class LlmJudge:
    """The `Judge` of `judges.asking`, backed by a language model."""

    def __init__(
        self,
        settings: JudgeSettings,
        *,
        timeout: float,
        budget: int | None,
        seconds: float | None = None,
        echo: bool = False,
        wait_for_build: bool = True,
        llm: Any = None,
    ):
        self.settings = settings
        self.timeout = timeout
        self.budget = budget  # calls for this judge's life (a dream run); None: no limit
        self.stop_at = None if seconds is None else time.monotonic() + seconds  # no call starts after
        self.echo = echo  # say each dropped or failed call on stderr at once (a server's log)
        self.wait_for_build = wait_for_build  # false: the first candidates go unjudged while it builds
        self.tally = JudgeTally()
        self._llm = llm
        self._absent: str | None = None
        self._resting_until = 0.0
        self._lock = threading.Lock()
        self._building = threading.Lock()  # held while mem0 builds the model (seconds: it imports mem0)
        self._builder: threading.Thread | None = None

    @property
    def built(self) -> bool:
        return self._llm is not None

    def model(self, *, wait: bool = True) -> Any:
        """The model, built on first need; None (said once) when it cannot be. With `wait` false,
        a model not built yet is built on a background thread, and None is returned meanwhile."""
        if self._llm is None and self._absent is None:
            if wait:
                self._build()
            else:
                self._build_soon()
        if self._absent is not None:
            say_off(self._absent)
        return self._llm

    def _build(self) -> None:
        with self._building:
            if self._llm is None and self._absent is None:
                try:
                    self._llm = build_llm(self.settings)
                except JudgeUnavailable as exc:
                    self._absent = str(exc)
                    say_off(self._absent)

    def _build_soon(self) -> None:
        with self._lock:
            if self._builder is None:
                self._builder = threading.Thread(target=self._build, name="mem0-judge-build", daemon=True)
                self._builder.start()

    def answer(self, candidate: Candidate, dates: Mapping[str, str] | None = None) -> Candidate | None:
        if not self._may_call():
            return None
        llm = self.model(wait=self.wait_for_build)
        if llm is None:
            return None
        with self._lock:
            self.tally.asked += 1
        try:
            text = call_within(
                lambda: llm.generate_response(messages=messages_for(candidate, dates), response_format=RESPONSE_FORMAT),
                self.timeout,
            )
        except Exception as exc:  # the provider's errors (network, quota, model) or the timeout
            self._failed(candidate, exc)
            return None
        try:
            return read_answer(text, candidate)
        except AnswerRefused as exc:
            with self._lock:
                self.tally.dropped += 1
            self._note(f"the judge's answer about {candidate.ids[0]} was dropped: {exc}")
            return None

    def _may_call(self) -> bool:
        with self._lock:
            if self.budget is not None and self.tally.asked >= self.budget:
                return False
            now = time.monotonic()
            return now >= self._resting_until and (self.stop_at is None or now < self.stop_at)

    def _note(self, line: str) -> None:
        with self._lock:
            self.tally.note(line)
        if self.echo:
            print(f"mem0: {line}", file=sys.stderr)

    def _failed(self, candidate: Candidate, exc: Exception) -> None:
        with self._lock:
            self.tally.failed += 1
            self._resting_until = time.monotonic() + REST_SECONDS
        self._note(
            f"the judge failed on {candidate.ids[0]} ({self.settings.label}: {first_line(exc)}); "
            f"no call for {REST_SECONDS:g} s"
        )


def judge_for_dream(home: Path) -> LlmJudge | None:
    """The judge of one `mem0-dream --auto` run (not built yet), or None: no `llm:` section, or
    one that cannot work (said once on stderr)."""
    settings = _settings(home)
    if settings is None:
        return None
    limits = settings.judge
    return LlmJudge(
        settings, timeout=limits.timeout_seconds, budget=limits.max_calls_per_run, seconds=limits.max_seconds_per_run
    )


def _settings(home: Path) -> JudgeSettings | None:
    try:
        return read_settings(home)
    except JudgeUnavailable as exc:
        say_off(str(exc))
        return None


class WritePathJudge:
    """The write path's judge for a long-lived process (the MCP server): the configuration is
    read the first time an uncertain pair needs it, never at start; None when no language model
    is configured for the write path (`judge.write_path: false`). The model is then built on a
    background thread (importing mem0 takes seconds): the adds meanwhile are not judged."""

    def __init__(self, home: Path):
        self.home = Path(home)
        self._judge: LlmJudge | None = None
        self._read = False
        self._lock = threading.Lock()
        self._building = threading.Lock()  # held while mem0 builds the model (seconds: it imports mem0)
        self._builder: threading.Thread | None = None

    @property
    def built(self) -> bool:
        return self._judge is not None and self._judge.built

    def get(self) -> LlmJudge | None:
        if self._read:  # after the first time: one attribute read
            return self._judge
        with self._lock:
            if not self._read:
                settings = _settings(self.home)
                if settings is not None and settings.judge.write_path:
                    self._judge = LlmJudge(
                        settings,
                        timeout=settings.judge.write_timeout_seconds,
                        budget=None,
                        echo=True,
                        wait_for_build=False,  # an add never waits for mem0 to import and build
                    )
                self._read = True  # last: a thread that sees it sees the judge too
            return self._judge
