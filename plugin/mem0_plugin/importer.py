"""Reading memory records for import: a JSON array, a `{"results": [...]}` page (the Mem0
platform's export) or JSON Lines. Broken records are reported with their position.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .errors import InvalidInputError


@dataclass(frozen=True)
class RawRecord:
    where: str  # "line 3" or "item 3"
    record: Any


def parse_records(text: str) -> tuple[list[RawRecord], list[str]]:
    """(records, problems): each problem names the line or item and what is wrong."""
    stripped = text.lstrip("\ufeff").strip()
    if not stripped:
        return [], []
    if stripped[0] in "[{":
        try:
            document = json.loads(stripped)
        except RecursionError:
            raise InvalidInputError("the file is not importable: JSON nested too deeply") from None
        except json.JSONDecodeError as exc:
            if stripped[0] == "[":  # an array is one document, never JSON Lines: say where it broke
                raise InvalidInputError(
                    f"the file is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
                ) from None
            document = None
        except ValueError:
            document = None  # e.g. a huge integer: let the line-by-line reading name the line
        if isinstance(document, list):
            return [RawRecord(f"item {i}", r) for i, r in enumerate(document, 1)], []
        if isinstance(document, dict) and isinstance(document.get("results"), list):
            return [RawRecord(f"item {i}", r) for i, r in enumerate(document["results"], 1)], []
        if isinstance(document, dict) and ("memory" in document or "text" in document):
            return [RawRecord("item 1", document)], []
        if isinstance(document, dict):
            raise InvalidInputError('a JSON object to import must have a "results" list')
    return _json_lines(stripped)


def _json_lines(text: str) -> tuple[list[RawRecord], list[str]]:
    records, problems = [], []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append(RawRecord(f"line {number}", json.loads(line)))
        except json.JSONDecodeError as exc:
            problems.append(f"line {number}: not JSON ({exc.msg})")
        except RecursionError:
            problems.append(f"line {number}: JSON nested too deeply")
        except ValueError as exc:  # e.g. an integer of thousands of digits
            problems.append(f"line {number}: not usable JSON ({exc})")
    return records, problems
