"""The `llm:` and `judge:` sections of ``$MEM0_HOME/config.yaml`` (docs/judges.md), read with
pyyaml and checked with pydantic. Reading them builds nothing: the model is made by
`llm_judge.LlmJudge` the first time a candidate needs judging.

```yaml
llm:                         # mem0's own shape: any provider of mem0's LlmFactory
  provider: ollama
  config: {model: llama3.1:8b, ollama_base_url: http://localhost:11434}
judge:                       # ours; every key optional
  timeout_seconds: 30        # per call, mem0-dream --auto
  max_calls_per_run: 20      # calls per mem0-dream --auto run
  max_seconds_per_run: 300   # no call starts later in the run (at most 480)
  write_path: true           # also ask on add_memory(infer=true)
  write_timeout_seconds: 10  # per call on the write path
```

No `llm:` section (or ``provider: none``): there is no judge, and nothing is said. A section
that cannot work is `JudgeUnavailable`, one line naming the key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..config_file import read_config
from ..errors import ConfigError, Mem0PluginError

OFF = frozenset({"none", "off", "disabled"})


class JudgeUnavailable(Mem0PluginError):
    """The configured language model cannot be used (a bad section, mem0ai missing, a provider
    that cannot be built). Never fatal: the rules decide alone."""

    exit_code = 2


class LlmSection(BaseModel):
    """mem0's `llm:` section: the provider's name and its own config, passed on as given."""

    model_config = ConfigDict(extra="forbid")

    provider: str
    config: dict[str, Any] = Field(default_factory=dict)

    @field_validator("provider")
    @classmethod
    def _provider(cls, value: str) -> str:
        value = value.strip().lower()
        if not value:
            raise ValueError("must name a provider (ollama, openai, anthropic, ...)")
        return value


class JudgeSection(BaseModel):
    """Our own settings for the judge."""

    model_config = ConfigDict(extra="forbid")

    timeout_seconds: float = Field(default=30.0, gt=0, le=600)
    max_calls_per_run: int = Field(default=20, ge=0, le=10_000)
    # the whole run's judging; under --auto's 10-minute lock (docs/dream.md, "--auto")
    max_seconds_per_run: float = Field(default=300.0, gt=0, le=480)
    write_path: bool = True
    write_timeout_seconds: float = Field(default=10.0, gt=0, le=600)


class JudgeSettings(BaseModel):
    """Both sections, checked."""

    llm: LlmSection
    judge: JudgeSection = Field(default_factory=JudgeSection)

    @property
    def label(self) -> str:
        """``<provider>/<model>`` for messages."""
        return f"{self.llm.provider}/{self.llm.config.get('model') or 'default'}"


def read_settings(home: Path) -> JudgeSettings | None:
    """The judge's settings, or None when no language model is configured. Raises
    `JudgeUnavailable` (one line) for a file or section that cannot work."""
    try:
        path, data = read_config(home)
    except ConfigError as exc:
        raise JudgeUnavailable(str(exc)) from None
    llm = data.get("llm")
    if llm is None or (isinstance(llm, dict) and str(llm.get("provider", "")).strip().lower() in OFF):
        return None
    try:
        return JudgeSettings.model_validate({"llm": llm, "judge": data.get("judge") or {}})
    except ValidationError as exc:
        raise JudgeUnavailable(f"{path}: {_describe(exc)}") from None


def _describe(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error.get("loc", ())) or "value"
    return f"{where}: {error.get('msg', 'invalid')}"
