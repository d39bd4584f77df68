"""What Codex's `config.toml` says about the `mem0` name (docs/mcp-tools.md, "One server per
name in Codex"). Pure: text in, finding out.

Codex keeps one MCP server per name, and a server of `config.toml` (`[mcp_servers.mem0]`, what
`codex mcp add mem0 …` writes) takes the place of a plugin's server of the same name: with this
plugin enabled there too (`[plugins."mem0@<marketplace>"]`), Codex runs the hand-added server
and never the plugin's (checked with codex-cli 0.171.0: `codex mcp list` shows only the
hand-added one). Read line by line (table headers and `key = value` lines), so that it needs
no TOML library on Python 3.10; what it cannot read is no finding.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SERVER = "mem0"
_HEADER = re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]\s*(?:#.*)?$")
_SERVER_TABLE = re.compile(r"""mcp_servers\s*\.\s*(?:"mem0"|'mem0'|mem0)""")
_PLUGIN_TABLE = re.compile(r"""plugins\s*\.\s*["']mem0@[^"']+["']""")
_VALUE = re.compile(r"^\s*([A-Za-z_]+)\s*=\s*(.+?)\s*$")


@dataclass(frozen=True)
class Clash:
    """A `mem0` server of config.toml beside the enabled plugin: the command it runs."""

    command: str


def clash_in(text: str) -> Clash | None:
    """The clash `text` (a config.toml) describes, or None."""
    tables: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for line in text.splitlines():
        header = _HEADER.match(line)
        if header:
            name = header.group(1)
            kind = "server" if _SERVER_TABLE.fullmatch(name) else "plugin" if _PLUGIN_TABLE.fullmatch(name) else ""
            current = tables.setdefault(kind, {}) if kind else None
            continue
        value = _VALUE.match(line.split(" #", 1)[0]) if current is not None else None
        if value and current is not None:
            current[value.group(1)] = value.group(2)
    server, plugin = tables.get("server"), tables.get("plugin")
    if server is None or plugin is None:
        return None
    if plugin.get("enabled", "true").lower() == "false" or server.get("enabled", "true").lower() == "false":
        return None
    command = " ".join(part for part in (_plain(server.get("command", "")), _plain(server.get("args", ""))) if part)
    return Clash(command or "?")


def _plain(value: str) -> str:
    """A TOML string or array of strings as words: `"npx"` → npx, `["-y", "x"]` → -y x."""
    return " ".join(re.findall(r'"((?:[^"\\]|\\.)*)"', value)) or value.strip("'")
