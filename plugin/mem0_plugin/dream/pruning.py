"""Dream's prune rules (docs/dream.md, "Step 3: analyse").

* **Retention** — the memory's type has a policy of N days (an int; ``None`` is
  "forever") and its age exceeds N: with 90, a memory 90 days old is kept and one 91 days
  old is pruned. Age is whole days, floored: ``(now - created_at).days``. A memory whose
  ``created_at`` is missing or unparseable has no age and is never pruned by retention;
  one dated in the future has a negative age and is never pruned by retention either.
* **Low confidence** — ``metadata.confidence`` is a number below 0.3 (0.3 is kept;
  missing, non-numeric or boolean confidence is unknown, never low) and the text carries
  nothing specific to the project: no file path, identifier, version, URL, quoted code,
  number or proper noun (`features.TextFeatures.specific`). Its ``age_days`` is reported
  as its age, 0 when unknown or in the future.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from ..language.analysed import AnalysedMemory
from .plan import REASON_LOW_CONFIDENCE, REASON_RETENTION, PruneAction
from .retention import is_retention_value

LOW_CONFIDENCE = 0.3


def age_days(item: AnalysedMemory, now: datetime) -> int | None:
    """Whole days from `created_at` to `now`, floored; None when `created_at` is unusable."""
    return None if item.created is None else (now - item.created).days


def retention_prune(item: AnalysedMemory, policy: Mapping[str, int | None], now: datetime) -> PruneAction | None:
    days = policy.get(item.type)
    age = age_days(item, now)
    if days is None or not is_retention_value(days) or age is None or age <= days:
        return None
    return PruneAction(id=item.id, type=item.type, age_days=age, reason=REASON_RETENTION)


def low_confidence_prune(item: AnalysedMemory, now: datetime) -> PruneAction | None:
    confidence = item.memory.confidence
    if confidence is None or confidence >= LOW_CONFIDENCE or item.features.specific:
        return None
    age = max(0, age_days(item, now) or 0)
    return PruneAction(
        id=item.id, type=item.type, age_days=age, reason=REASON_LOW_CONFIDENCE, confidence=float(confidence)
    )
