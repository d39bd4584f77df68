"""What a session did, read from the transcript its client keeps (docs/hooks.md, "Capture").
Pure: lines in, a `Digest` out; `read_lines` is the one function that touches the file.

Two formats are read, each line a JSON object:

* Claude Code (`~/.claude/projects/…/<session>.jsonl`): `{"type": "user" | "assistant",
  "message": {"content": text | [blocks]}, …}`; an assistant's `tool_use` block names the tool
  and its `input` (`Bash` → `command`; `Write`, `Edit`, `MultiEdit`, `NotebookEdit` →
  `file_path`), the next user line answers it with a `tool_result` block (`is_error`); the
  summary a compaction wrote is a user line marked `isCompactSummary`; side chains
  (`isSidechain`, a subagent's work) are not the session's.
* Codex (`~/.codex/sessions/…/rollout-*.jsonl`): `{"type": "response_item", "payload": {…}}`
  with payloads `message` (role and `input_text` / `output_text` parts), `function_call`
  (`shell` with `arguments` `{"command": [...]}`, `apply_patch`) and `function_call_output`
  (`output`, JSON text with `metadata.exit_code`), and `{"type": "compacted"}` lines.

A line of neither format, or one that is not JSON, is skipped.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HEAD_BYTES = 256 * 1024  # the session's first prompt is near the start
TAIL_BYTES = 4 * 1024 * 1024  # what it did last, near the end
EDIT_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
SHELL_TOOLS = frozenset({"Bash", "shell", "local_shell", "exec_command", "Shell"})
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.M)
_EXIT_CODE = re.compile(r"(?:^|\n)\s*(?:Error: )?Exit code:? (\d+)", re.I)
_INJECTED = ("<command-", "<local-command", "<system-reminder", "<user-prompt-submit-hook", "Caveat:")


@dataclass
class Digest:
    """A session's work: what was asked, the files it changed, the commands that failed and
    whether they passed later, and the last thing the agent said."""

    asked: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    fixed: list[str] = field(default_factory=list)  # commands that failed, then passed
    failing: list[str] = field(default_factory=list)  # commands whose last run failed
    last_said: str = ""
    compact_summary: str = ""  # the summary the client's compaction wrote, when there is one

    @property
    def empty(self) -> bool:
        return not (self.asked or self.files or self.fixed or self.failing or self.last_said)


def read_lines(path: str | Path) -> list[str]:
    """The transcript's lines: its first `HEAD_BYTES` and last `TAIL_BYTES` (a long session's
    middle is not read); [] when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(0)
            if size <= HEAD_BYTES + TAIL_BYTES:
                data = handle.read()
            else:
                head = handle.read(HEAD_BYTES)
                head = head[: head.rfind(b"\n") + 1]
                handle.seek(size - TAIL_BYTES)
                tail = handle.read()
                data = head + tail[tail.find(b"\n") + 1 :]
    except OSError:
        return []
    return data.decode("utf-8", errors="replace").splitlines()


def _records(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    for line in lines:
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            yield record


def _text_of(content: object) -> str:
    """The text of a message's content: a string, or the text parts of a list of blocks."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") in ("text", "input_text", "output_text"):
            text = block.get("text")
            if isinstance(text, str):
                parts.append(text)
    return "\n".join(parts)


def command_key(command: str) -> str:
    """What makes two runs one command: the program and its first argument that is not an
    option (`pytest tests/test_a.py -x` and `pytest tests/test_a.py` are one)."""
    try:
        words = shlex.split(command, posix=True)
    except ValueError:
        words = command.split()
    words = [w for w in words if "=" not in w or w.startswith("-")]  # FOO=1 pytest … is pytest
    if not words:
        return command.strip()
    rest = [w for w in words[1:] if not w.startswith("-")]
    return " ".join([words[0], *rest[:1]])


class _Reader:
    """Folds records into a `Digest`, keeping tool calls until their results arrive."""

    def __init__(self) -> None:
        self.digest = Digest()
        self.pending: dict[str, str] = {}  # tool call id -> its shell command
        self.last_failed: dict[str, str] = {}  # command key -> the command as last run, failing

    def restart(self) -> None:
        """A compaction: what came before is in its summary."""
        self.digest = Digest(compact_summary=self.digest.compact_summary)
        self.pending, self.last_failed = {}, {}

    def prompt(self, text: str) -> None:
        text = text.strip()
        if text and not text.startswith(_INJECTED):
            self.digest.asked.append(text)

    def changed(self, path: object) -> None:
        if isinstance(path, str) and path.strip() and path not in self.digest.files:
            self.digest.files.append(path.strip())

    def ran(self, call_id: object, command: object) -> None:
        if isinstance(command, list):
            command = " ".join(str(part) for part in command)
            if command.startswith(("bash -lc ", "bash -c ", "sh -c ")):
                command = command.split(" ", 2)[2]
        if isinstance(call_id, str) and isinstance(command, str) and command.strip():
            self.pending[call_id] = command.strip()

    def result(self, call_id: object, failed: bool) -> None:
        command = self.pending.pop(call_id, None) if isinstance(call_id, str) else None
        if command is None:
            return
        key = command_key(command)
        if failed:
            self.last_failed[key] = command
        elif key in self.last_failed:
            failed_before = self.last_failed.pop(key)
            if failed_before not in self.digest.fixed:
                self.digest.fixed.append(failed_before)

    def said(self, text: str) -> None:
        if text.strip():
            self.digest.last_said = text.strip()

    def done(self) -> Digest:
        self.digest.failing = list(self.last_failed.values())
        return self.digest


def _claude(reader: _Reader, record: dict[str, Any]) -> None:
    if record.get("isSidechain") is True:
        return
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if record.get("isCompactSummary") is True:
        reader.restart()
        reader.digest.compact_summary = _text_of(content).strip()
        return
    if record.get("type") == "user":
        blocks = content if isinstance(content, list) else []
        results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        for block in results:
            reader.result(block.get("tool_use_id"), _claude_failed(block))
        if not results:
            reader.prompt(_text_of(content))
    elif record.get("type") == "assistant" and isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                reader.said(str(block.get("text") or ""))
            elif block.get("type") == "tool_use":
                name, given = block.get("name"), block.get("input")
                given = given if isinstance(given, dict) else {}
                if name in EDIT_TOOLS:
                    reader.changed(given.get("file_path") or given.get("notebook_path"))
                elif name in SHELL_TOOLS:
                    reader.ran(block.get("id"), given.get("command"))


def _claude_failed(block: dict[str, Any]) -> bool:
    if block.get("is_error") is True:
        return True
    match = _EXIT_CODE.search(_text_of(block.get("content"))[:2000])
    return bool(match and match.group(1) != "0")


def _codex(reader: _Reader, record: dict[str, Any]) -> None:
    if record.get("type") == "compacted":
        reader.restart()
        payload = record.get("payload")
        if isinstance(payload, dict) and isinstance(payload.get("message"), str):
            reader.digest.compact_summary = payload["message"].strip()
        return
    payload = record.get("payload")
    if record.get("type") != "response_item" or not isinstance(payload, dict):
        return
    kind = payload.get("type")
    if kind == "message":
        text = _text_of(payload.get("content"))
        if payload.get("role") == "user":
            reader.prompt(text)
        elif payload.get("role") == "assistant":
            reader.said(text)
    elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
        _codex_call(reader, payload)
    elif kind in ("function_call_output", "custom_tool_call_output"):
        reader.result(payload.get("call_id"), _codex_failed(payload.get("output")))


def _codex_call(reader: _Reader, payload: dict[str, Any]) -> None:
    name = payload.get("name") or payload.get("type")
    arguments = payload.get("arguments", payload.get("input", payload.get("action")))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            arguments = {"input": arguments}
    arguments = arguments if isinstance(arguments, dict) else {}
    patch = arguments.get("input") if name == "apply_patch" else None
    if isinstance(patch, str):
        for path in _PATCH_FILE.findall(patch):
            reader.changed(path.strip())
    elif name in SHELL_TOOLS or name == "local_shell_call":
        reader.ran(payload.get("call_id"), arguments.get("command") or arguments.get("cmd"))


def _codex_failed(output: object) -> bool:
    if isinstance(output, str):
        text = output
        try:
            output = json.loads(text)
        except ValueError:
            match = _EXIT_CODE.search(text[:2000])
            return bool(match and match.group(1) != "0")
    if isinstance(output, dict):
        metadata = output.get("metadata")
        code = metadata.get("exit_code") if isinstance(metadata, dict) else output.get("exit_code")
        return isinstance(code, int) and code != 0
    return False


def digest(lines: Iterable[str]) -> Digest:
    """The `Digest` of a transcript's lines (either format; other lines skipped)."""
    reader = _Reader()
    for record in _records(lines):
        if "payload" in record and record.get("type") in ("response_item", "compacted", "event_msg"):
            _codex(reader, record)
        elif record.get("type") in ("user", "assistant"):
            _claude(reader, record)
    return reader.done()


def exit_code_of(lines: Iterable[str], tool_use_id: str) -> int | None:
    """The exit code Codex recorded for the command `tool_use_id` (an `exit_code` in the item
    of that id, as its rollout holds it when PostToolUse runs), None when no line says it."""
    if not tool_use_id:
        return None
    for line in reversed(list(lines)):
        if tool_use_id not in line or '"exit_code"' not in line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        found = _exit_code_in(record, tool_use_id)
        if found is not None:
            return found
    return None


def _exit_code_in(value: Any, tool_use_id: str, depth: int = 0) -> int | None:
    if depth > 6:
        return None
    if isinstance(value, dict):
        code = value.get("exit_code")
        if value.get("id") == tool_use_id or value.get("call_id") == tool_use_id:
            if isinstance(code, int) and not isinstance(code, bool):
                return code
        for item in value.values():
            found = _exit_code_in(item, tool_use_id, depth + 1)
            if found is not None:
                return found
    elif isinstance(value, list):
        for item in value:
            found = _exit_code_in(item, tool_use_id, depth + 1)
            if found is not None:
                return found
    return None
