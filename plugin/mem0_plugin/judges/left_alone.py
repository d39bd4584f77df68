"""What the language model left alone, remembered between `mem0-dream --auto` runs
(docs/judges.md, "Left alone"): ``$MEM0_HOME/judge/left-alone.json``, one entry per question
(`asking.candidate_key`) with the day it was answered "leave".

A remembered question is not asked again for `REMEMBER_DAYS` days; a text that changes, or
another model, makes another question. The file is small (at most `MAX_ENTRIES`, newest
kept), written whole to a temporary file and renamed under a `filelock`, so two runs never
interleave their writes and a run killed mid-write leaves the previous file. A file that
cannot be read is treated as empty: the worst case is one more call per question.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from datetime import datetime, timedelta
from pathlib import Path

from filelock import FileLock

from ..private_files import open_private, private_folder

REMEMBER_DAYS = 30
MAX_ENTRIES = 10_000
FILE_NAME = "left-alone.json"


def verdicts_path(home: Path) -> Path:
    return Path(home) / "judge" / FILE_NAME


def settled_keys(home: Path, now: datetime) -> frozenset[str]:
    """The questions left alone within the last `REMEMBER_DAYS` days."""
    oldest = (now - timedelta(days=REMEMBER_DAYS)).date().isoformat()
    return frozenset(key for key, day in _read(verdicts_path(home)).items() if day >= oldest)


def remember(home: Path, keys: Iterable[str], now: datetime) -> None:
    """Adds `keys` as left alone on `now`'s day; drops entries too old to be used."""
    new = list(keys)
    if not new:
        return
    path = verdicts_path(home)
    private_folder(path.parent)
    oldest = (now - timedelta(days=REMEMBER_DAYS)).date().isoformat()
    with FileLock(path.with_suffix(".lock"), mode=0o600):
        entries = {key: day for key, day in _read(path).items() if day >= oldest}
        entries.update(dict.fromkeys(new, now.date().isoformat()))
        newest = sorted(entries.items(), key=lambda item: item[1], reverse=True)[:MAX_ENTRIES]
        temporary = path.with_suffix(".tmp")
        with open_private(temporary) as handle:
            handle.write(json.dumps(dict(newest), indent=0))
        os.replace(temporary, path)


def _read(path: Path) -> dict[str, str]:
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(loaded, dict):
        return {}
    return {key: day for key, day in loaded.items() if isinstance(key, str) and isinstance(day, str)}
