"""Which hooks run, and their limits: the `hooks:` section of ``$MEM0_HOME/config.yaml`` and the
environment (docs/hooks.md, "Turning hooks off").

```yaml
hooks:
  enabled: true          # false: every hook adds nothing and writes nothing
  session_start: true    # the opening at session start
  prompt: true           # memories recalled for a prompt
  tool: true             # memories recalled after a failing command
  file_read: true        # memories that name a file the agent reads
  capture: true          # the branch's session_state at compaction and session end
  bootstrap: true        # CLAUDE.md, AGENTS.md, .cursorrules imported as project_profile
  idle_minutes: 10       # the recall service exits after this long without a request
```

`MEM0_HOOKS=off` turns every hook off and `MEM0_HOOK_<NAME>=off` one of them (`on` turns it
back on over the file); both win over the file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..config_file import first_problem, read_config
from ..errors import ConfigError

HOOK_NAMES = ("session_start", "prompt", "tool", "file_read", "capture", "bootstrap")
OFF = frozenset({"0", "off", "false", "no"})
ON = frozenset({"1", "on", "true", "yes"})


class HooksSection(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    session_start: bool = True
    prompt: bool = True
    tool: bool = True
    file_read: bool = True
    capture: bool = True
    bootstrap: bool = True
    idle_minutes: float = Field(default=10.0, gt=0, le=24 * 60)


@dataclass(frozen=True)
class HookSettings:
    """The hooks that run, and how long the recall service stays without a request."""

    enabled: frozenset[str]
    idle_seconds: float

    def on(self, name: str) -> bool:
        return name in self.enabled


def _switch(value: str | None) -> bool | None:
    if value is None:
        return None
    value = value.strip().lower()
    return True if value in ON else False if value in OFF else None


def hook_settings(home: str | Path, env: Mapping[str, str]) -> HookSettings:
    """The settings for `home` under `env`; `ConfigError` (one line) for a malformed section."""
    path, data = read_config(home)
    raw = data.get("hooks") or {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: hooks: must be a mapping")
    try:
        section = HooksSection.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(f"{path}: hooks: {first_problem(exc)}") from None
    every = _switch(env.get("MEM0_HOOKS"))
    enabled = set()
    for name in HOOK_NAMES:
        own = _switch(env.get(f"MEM0_HOOK_{name.upper()}"))
        if own is None:
            own = getattr(section, name) and (section.enabled if every is None else every)
        if own:
            enabled.add(name)
    return HookSettings(frozenset(enabled), section.idle_minutes * 60)
