"""JSON text from users and clients, parsed with every failure turned into one clear line."""

from __future__ import annotations

import json
from typing import Any

from .errors import InvalidInputError


def parse_json_text(text: str, subject: str, error: type[InvalidInputError] = InvalidInputError) -> Any:
    """`json.loads`, raising `error` ("<subject> not valid JSON: …") for malformed, too deep
    or unusable (e.g. a thousands-of-digits integer) text. `subject` reads like "filters are"."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"{subject} not valid JSON: {exc.msg}") from None
    except RecursionError:
        raise error(f"{subject} nested too deeply") from None
    except ValueError as exc:
        raise error(f"{subject} not valid JSON: {exc}") from None
