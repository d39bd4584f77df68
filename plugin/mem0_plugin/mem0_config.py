"""Parse a project's `mem0.md` (docs/identity.md, "mem0.md"). Standard library only.

`scripts/parse_mem0_config.py` runs this very module with a bare python3, so the
rules exist once. Nothing here raises on any content: malformed lines are skipped.
"""

from __future__ import annotations

import json
import os
import re
import sys

CONFIG_NAME = "mem0.md"
MAX_CONFIG_BYTES = 1_000_000
MAX_RETENTION_DAYS = 36_500  # a century; larger values cannot be subtracted from a date safely

_SECTION = r"^##[ \t]+{name}\b[^\n]*\n?(.*?)(?=^##[ \t]|^##$|\Z)"
# Days are ASCII digits only (`\d`, str.isdigit and int() also take Arabic-Indic,
# full-width and other Unicode digits): a line with other digits is malformed, so skipped.
_RETENTION_LINE = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*:\s*(?:([0-9]+)\s*d|(forever))\s*$", re.I)
_IDENTITY_LINE = re.compile(r"^\s*project_id\s*:\s*(\S+)\s*$", re.I)
_CATEGORY_LINE = re.compile(r"^\s*(?:[-*]\s*)?([A-Za-z0-9_.\-]+)\s*(?::.*)?$")


def find_mem0_config(cwd: str | None = None) -> str | None:
    """The path of `mem0.md` at the project root (cwd, else the nearest parent holding .git)."""
    start = os.path.abspath(cwd or os.getcwd())
    candidate = os.path.join(start, CONFIG_NAME)
    if os.path.isfile(candidate):
        return candidate
    current = start
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            candidate = os.path.join(current, CONFIG_NAME)
            return candidate if os.path.isfile(candidate) else None
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _section(content: str, name: str) -> str | None:
    match = re.search(_SECTION.format(name=re.escape(name)), content, re.I | re.M | re.S)
    return match.group(1) if match else None


def _lines(section: str):
    for raw in section.splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            yield line


def parse_retention(content: str) -> dict[str, int | None]:
    """`## Retention` lines `<category>: <N>d` → N, `<category>: forever` → None.

    N is ASCII digits (at most MAX_RETENTION_DAYS); any other line, non-ASCII digits
    included, is malformed and skipped."""
    if not isinstance(content, str):
        return {}
    section = _section(content, "Retention")
    policies: dict[str, int | None] = {}
    for line in _lines(section or ""):
        match = _RETENTION_LINE.match(line)
        if not match:
            continue
        category, days, forever = match.groups()
        if forever:
            policies[category] = None
        elif len(days) <= 6 and int(days) <= MAX_RETENTION_DAYS:
            policies[category] = int(days)
    return policies


def parse_identity(content: str) -> str | None:
    """`project_id: <id>` under `## Identity`, or None."""
    section = _section(content, "Identity") if isinstance(content, str) else None
    for line in _lines(section or ""):
        match = _IDENTITY_LINE.match(line)
        if match:
            return match.group(1)
    return None


def parse_categories(content: str) -> list[str]:
    """Category names listed under `## Categories` (one per line, `- name` or `name: text`)."""
    section = _section(content, "Categories") if isinstance(content, str) else None
    names = []
    for line in _lines(section or ""):
        match = _CATEGORY_LINE.match(line)
        if match:
            names.append(match.group(1))
    return names


def parse_instructions(content: str) -> str:
    """The text of the `## Instructions` section (the project's memory policy, in prose), its
    lines trimmed and comments kept as written; "" when there is none. The section is prose, so
    `#` does not start a comment there."""
    section = _section(content, "Instructions") if isinstance(content, str) else None
    lines = [line.strip() for line in (section or "").splitlines()]
    return "\n".join(line for line in lines if line).strip()


def load_instructions(cwd: str | None = None) -> str:
    """The `## Instructions` of the project at cwd; "" without mem0.md, its section, or on any problem."""
    try:
        path = find_mem0_config(cwd)
        return parse_instructions(read_config_text(path)) if path else ""
    except (OSError, ValueError):
        return ""


def replace_section(content: str, name: str, body: str) -> str:
    """`content` with its `## <name>` section's body replaced by `body` (the section appended
    at the end when there is none; removed when `body` is empty). Every other line is kept as
    it was."""
    section = re.compile(_SECTION.format(name=re.escape(name)), re.I | re.M | re.S)
    block = f"## {name}\n{body.strip()}\n\n" if body.strip() else ""
    match = section.search(content)
    if match is None:
        if not block:
            return content
        lead = content.rstrip("\n")
        return f"{lead}\n\n{block}".lstrip("\n").rstrip("\n") + "\n"
    return (content[: match.start()] + block + content[match.end() :].lstrip("\n")).rstrip("\n") + "\n"


def retention_body(policies: dict[str, int | None]) -> str:
    """The lines of a `## Retention` section for `policies` (`<type>: <N>d`, `<type>: forever`)."""
    return "\n".join(f"{name}: {'forever' if days is None else f'{days}d'}" for name, days in policies.items())


def read_config_text(path: str) -> str:
    """The first MAX_CONFIG_BYTES of the file as text; undecodable bytes replaced."""
    with open(path, "rb") as handle:
        return handle.read(MAX_CONFIG_BYTES).decode("utf-8", errors="replace")


def load_retention_policies(cwd: str | None = None) -> dict:
    """The Retention policies of the project at cwd; {} without mem0.md or its section."""
    try:
        path = find_mem0_config(cwd)
        return parse_retention(read_config_text(path)) if path else {}
    except (OSError, ValueError):
        return {}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    print(json.dumps(load_retention_policies(args[0] if args else None)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
