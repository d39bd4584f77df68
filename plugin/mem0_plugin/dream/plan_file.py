"""Reading a plan file (docs/dream.md, "Plan file"): `plan_from_json(text)` accepts nothing it
does not understand: every problem raises `PlanError` with one line naming the field
(``plan: merges[0].ids must ...``). The pydantic models of `plan_checks` check types and
ranges, ``version == 1``, unknown or missing keys, that no memory id appears in two actions,
that a conflict lists its likely winner first, and that every id an action names has a
fingerprint. Extra fingerprints are allowed: removing an action from the file is how an agent
declines it. ``plan_from_json(plan.plan_to_json(p)) == p``.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import PlanError
from .plan import Plan


def plan_from_json(text: str | bytes) -> Plan:
    """Parse and validate a plan file; any problem is a one-line `PlanError`."""
    return plan_from_dict(_load_json(text))


def _load_json(text: str | bytes) -> Any:
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise PlanError("plan is not UTF-8 text") from None
    if not isinstance(text, str):
        raise PlanError(f"plan must be JSON text, got {type(text).__name__}")
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise PlanError(f"plan is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except RecursionError:
        raise PlanError("plan is not valid JSON (nested too deeply)") from None


def _reject_constant(name: str) -> None:
    raise PlanError(f"plan is not valid JSON ({name} is not a number)")


def plan_from_dict(data: Any) -> Plan:
    """Validate the decoded JSON object of a plan file (see the module docstring)."""
    from .plan_checks import plan_from_dict as checked  # pydantic loads only when a plan file is read

    return checked(data)
