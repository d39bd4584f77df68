"""The pydantic models of the `llm:` and `judge:` sections (`config.read_settings` reads them;
docs/judges.md has the keys)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator


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
