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
that cannot work is `JudgeUnavailable`, one line naming the key. The sections are checked by
the pydantic models of `settings`, imported only when there is an `llm:` section to check (a
nightly run without a language model does not pay for importing pydantic).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..config_file import first_problem, read_config
from ..errors import ConfigError, Mem0PluginError

if TYPE_CHECKING:
    from .settings import JudgeSettings

OFF = frozenset({"none", "off", "disabled"})


class JudgeUnavailable(Mem0PluginError):
    """The configured language model cannot be used (a bad section, mem0ai missing, a provider
    that cannot be built). Never fatal: the rules decide alone."""

    exit_code = 2


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
    from pydantic import ValidationError

    from .settings import JudgeSettings

    try:
        return JudgeSettings.model_validate({"llm": llm, "judge": data.get("judge") or {}})
    except ValidationError as exc:
        raise JudgeUnavailable(f"{path}: {first_problem(exc)}") from None
