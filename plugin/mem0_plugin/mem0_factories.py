"""mem0's own factories (`EmbedderFactory` for docs/embeddings.md, `LlmFactory` for
docs/judges.md), imported when first needed with one policy: mem0ai is the optional extra
`[mem0]`, so its absence, or a broken install, is one line naming what to do."""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any

from .private_files import private_folder

MEM0_EXTRA = "pip install 'mem0-dream-plugin[mem0]'"


def first_line(exc: BaseException) -> str:
    """An exception's first line (at most 200 characters), or its type's name."""
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:200]


def quiet_sdk(sdk_dir: Path | None = None) -> None:
    """Before mem0ai is first imported: its usage telemetry off (``MEM0_TELEMETRY``, which it
    reads once, at import, and takes as on only for ``true``, ``1`` or ``yes``), and the
    ``config.json`` it writes at import (an anonymous id) in `sdk_dir` (``MEM0_DIR``), by default
    ``<MEM0_HOME>/cache/mem0ai`` rather than its own ``~/.mem0``. A value the user set is kept
    (docs/server.md, "mem0's SDK and telemetry")."""
    os.environ.setdefault("MEM0_TELEMETRY", "False")
    if "MEM0_DIR" in os.environ:
        return
    home = Path(os.environ.get("MEM0_HOME") or Path.home() / ".mem0").expanduser()
    folder = sdk_dir if sdk_dir is not None else home / "cache" / "mem0ai"
    try:
        private_folder(folder)
    except OSError:
        return  # mem0ai then uses its default
    os.environ["MEM0_DIR"] = str(folder)


def mem0_factory(name: str, error: type[Exception], label: str, missing_label: str | None = None) -> Any:
    """``mem0.utils.factory.<name>``, or `error` saying why not: ``<missing_label> needs the
    mem0ai package`` when mem0ai is not installed, ``<label>: <reason>`` when it is broken."""
    quiet_sdk()
    try:
        module = importlib.import_module("mem0.utils.factory")
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] != "mem0":  # mem0 is there; one of its dependencies is not
            raise error(f"{label}: {first_line(exc)}") from None
        raise error(f"{missing_label or label} needs the mem0ai package (not installed): {MEM0_EXTRA}") from None
    except Exception as exc:  # mem0 installed but broken (a dependency too old)
        raise error(f"{label}: {first_line(exc)}") from None
    return getattr(module, name)
