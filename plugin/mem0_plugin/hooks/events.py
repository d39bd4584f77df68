"""The hook payloads each client sends on standard input, read into one `Event`, and the answer
each client reads from standard output (docs/hooks.md, "Clients"). Pure.

| what | Claude Code | Codex | Cursor |
|---|---|---|---|
| session start | `SessionStart` (`source`) | `SessionStart` (`source`) | `sessionStart` |
| a prompt | `UserPromptSubmit` (`prompt`) | `UserPromptSubmit` (`prompt`) | — (`beforeSubmitPrompt` cannot add context) |
| a command ran | `PostToolUse` / `PostToolUseFailure` on `Bash` | `PostToolUse` on `Bash` | `postToolUse` / `postToolUseFailure` on `Shell` |
| a file read | `PostToolUse` on `Read` | — | `postToolUse` on `Read` |
| compaction | `PreCompact`; `PostCompact` (`compact_summary`) | `PreCompact` | `preCompact` |
| session end | `SessionEnd` | `SessionEnd` | `sessionEnd` |

Context goes back as `{"hookSpecificOutput": {"hookEventName": …, "additionalContext": …}}`
(Claude Code, Codex: no other key, Codex refuses unknown ones) or `{"additional_context": …}`
(Cursor). Capture events answer nothing.
"""

from __future__ import annotations

import enum
import json
import re
from dataclasses import dataclass
from typing import Any

CLIENTS = ("claude", "codex", "cursor")
MAX_TEXT = 200_000  # of a prompt or a command's output: the rest is not read


class Kind(enum.Enum):
    START = "start"
    PROMPT = "prompt"
    COMMAND = "command"  # a shell command finished
    READ = "read"  # a file was read
    PRE_COMPACT = "pre_compact"
    POST_COMPACT = "post_compact"
    END = "end"
    OTHER = "other"


# (client, event name) -> kind; the tool decides between COMMAND and READ
_KINDS = {
    "SessionStart": Kind.START,
    "sessionStart": Kind.START,
    "UserPromptSubmit": Kind.PROMPT,
    "PostToolUse": Kind.COMMAND,
    "PostToolUseFailure": Kind.COMMAND,
    "postToolUse": Kind.COMMAND,
    "postToolUseFailure": Kind.COMMAND,
    "PreCompact": Kind.PRE_COMPACT,
    "preCompact": Kind.PRE_COMPACT,
    "PostCompact": Kind.POST_COMPACT,
    "SessionEnd": Kind.END,
    "sessionEnd": Kind.END,
}
SHELL_TOOLS = frozenset({"Bash", "Shell", "shell", "exec_command", "local_shell"})
READ_TOOLS = frozenset({"Read", "read_file"})
_EXIT = re.compile(r"(?:^|\n)\s*(?:Exit code:?|Process exited with code|exit code:?|exit status:?)\s*(-?\d+)", re.I)


@dataclass(frozen=True)
class Event:
    """One hook call, whatever the client: what happened and what it is about."""

    client: str
    name: str  # the event as the client calls it
    kind: Kind
    session_id: str = ""
    cwd: str = ""
    transcript_path: str = ""
    source: str = ""  # SessionStart: startup, resume, clear, compact
    prompt: str = ""
    tool: str = ""
    command: str = ""
    output: str = ""
    exit_code: int | None = None
    file_path: str = ""
    tool_use_id: str = ""
    compact_summary: str = ""
    subagent: bool = False


def _text(value: object) -> str:
    return value[:MAX_TEXT] if isinstance(value, str) else ""


def _exit_code(text: str) -> int | None:
    match = _EXIT.search(text[:4000])
    return int(match.group(1)) if match else None


def _tool_output(client: str, name: str, payload: dict[str, Any]) -> tuple[str, int | None]:
    """(what the command printed, its exit code when the client says it)."""
    if name in ("PostToolUseFailure", "postToolUseFailure"):  # Claude Code: "Exit code N\n<output>"
        error = _text(payload.get("error") or payload.get("error_message"))
        code = _exit_code(error)
        return error, 1 if code is None else code
    response = payload.get("tool_output") if client == "cursor" else payload.get("tool_response")
    if isinstance(response, str):
        try:
            decoded = json.loads(response) if response.lstrip().startswith("{") else None
        except ValueError:
            decoded = None
        if isinstance(decoded, dict):
            response = decoded
        else:  # Codex: what the command printed; its exit code is in the transcript (`tool_use_id`)
            return _text(response), _exit_code(response)
    if isinstance(response, dict):
        printed = "\n".join(_text(response.get(key)) for key in ("stdout", "stderr", "output") if response.get(key))
        code = response.get("exitCode", response.get("exit_code"))
        if client == "claude" and code is None:
            code = 0  # Claude Code: PostToolUse follows a command that succeeded (else PostToolUseFailure)
        return printed[:MAX_TEXT], code if isinstance(code, int) and not isinstance(code, bool) else None
    return "", None


def parse(client: str, name: str, payload: object) -> Event:
    """The `Event` of a payload (`ValueError` for an unknown client). A payload that is not an
    object, or lacks fields, gives an event with those fields empty: never an exception."""
    if client not in CLIENTS:
        raise ValueError(f"unknown client {client!r}: one of {', '.join(CLIENTS)}")
    data: dict[str, Any] = payload if isinstance(payload, dict) else {}
    kind = _KINDS.get(name, Kind.OTHER)
    tool = _text(data.get("tool_name"))
    given = data.get("tool_input") if isinstance(data.get("tool_input"), dict) else {}
    assert isinstance(given, dict)
    fields: dict[str, Any] = {}
    if kind is Kind.COMMAND:
        if tool in READ_TOOLS:
            kind = Kind.READ
            fields["file_path"] = _text(given.get("file_path") or given.get("path") or given.get("target_file"))
        elif tool in SHELL_TOOLS:
            command = given.get("command")
            if isinstance(command, list):
                command = " ".join(str(part) for part in command)
            fields["command"] = _text(command)
            fields["output"], fields["exit_code"] = _tool_output(client, name, data)
            fields["tool_use_id"] = _text(data.get("tool_use_id"))[:200]
        else:
            kind = Kind.OTHER
    roots = data.get("workspace_roots")
    cwd = _text(data.get("cwd")) or (
        roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) else ""
    )
    return Event(
        client=client,
        name=name,
        kind=kind,
        session_id=_text(data.get("session_id") or data.get("conversation_id"))[:200],
        cwd=cwd,
        transcript_path=_text(data.get("transcript_path")),
        source=_text(data.get("source")) or ("startup" if kind is Kind.START else ""),
        prompt=_text(data.get("prompt")),
        tool=tool,
        compact_summary=_text(data.get("compact_summary")),
        subagent=bool(data.get("agent_id")) and kind in (Kind.END, Kind.PRE_COMPACT),
        **fields,
    )


def reply(event: Event, context: str) -> str:
    """What to print for `context` (the text to add to the agent's context): "" when there is
    nothing, or the client cannot take context at this event."""
    if not context or event.kind not in (Kind.START, Kind.PROMPT, Kind.COMMAND, Kind.READ):
        return ""
    if event.client == "cursor":
        if event.kind is Kind.PROMPT:
            return ""
        return json.dumps({"additional_context": context}, ensure_ascii=False)
    return json.dumps(
        {"hookSpecificOutput": {"hookEventName": event.name, "additionalContext": context}}, ensure_ascii=False
    )
