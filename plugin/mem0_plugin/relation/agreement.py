"""Agreement: a text that restates another says nothing against it (docs/dream.md, "Guards"). Pure.

* `restates` — an acknowledgement ("Noted: you prefer tabs", "Confirmed — we deploy with Helm",
  "好的，用 pnpm", "Понял: деплой через Helm", "了解: Helm でデプロイ") whose every word of
  substance the other text says, and no value of its own: it repeats the other, whatever the
  other's negations or choices. It never conflicts with what it restates; close enough, it is
  a duplicate of it, and never a merge's draft (`relations`).
* `same_choice` — "Y over X" (or "Y rather than X", "Y instead of X") and a text that states Y
  without naming X: the same choice, its alternative left out ("I prefer tabs over spaces" /
  "prefers tabs"); naming X it would be the other choice.
"""

from __future__ import annotations

import re

from ..language.reading import Reading, literal_values, mentions

# An acknowledgement opening a text, up to its colon, dash or comma (or the end)
_ACKNOWLEDGEMENT = re.compile(
    r"^\s*(?:noted|confirmed|acknowledged|understood|got it|will do|ok(?:ay)?|sure|agreed|yes|right|"
    r"roger|sounds good|makes sense|good to know|thanks|thank you|"
    r"好的|收到|明白了?|知道了|了解了?|確認しました|承知しました|承知|了解しました|わかりました|"
    r"понял[аи]?|принято|хорошо|ясно|согласен|согласна|подтверждаю|подтверждено)"
    r"(?:[\s,.!]*(?:noted|thanks|thank you))?\s*(?:[:,.!—–-]|$)"
)


def acknowledgement(r: Reading) -> str | None:
    """The acknowledgement the text opens with, or None."""
    found = _ACKNOWLEDGEMENT.match(r.lowered)
    return found.group(0) if found is not None else None


def restates(a: Reading, b: Reading) -> bool:
    """One text acknowledges and repeats the other: every content word it says, the other says
    too, and every literal it holds the other holds."""
    return _restates(a, b) or _restates(b, a)


def _restates(ack: Reading, other: Reading) -> bool:
    opening = acknowledgement(ack)
    if opening is None:
        return False
    said = [word for word in ack.content if not _in(word, opening)]
    return bool(said) and all(mentions(word, other) for word in said) and literal_values(ack) <= literal_values(other)


_CHOICE = re.compile(r"\b(?:over|rather than|instead of)\b")


def same_choice(chooser: Reading, other: Reading) -> bool:
    """`chooser` prefers one thing over another ("tabs over spaces") and `other` states the chosen
    one ("prefer tabs") and does not name the rejected one."""
    marker = _CHOICE.search(chooser.lowered)
    if marker is None:
        return False
    before = re.split(r"[.;:!?]", chooser.lowered[: marker.start()])[-1]
    after = re.split(r"[.;:!?,]", chooser.lowered[marker.end() :])[0]
    chosen = [w for w in chooser.content if _in(w, before)]
    rejected = [w for w in chooser.content if _in(w, after)]
    return (
        bool(chosen)
        and bool(rejected)
        and any(mentions(w, other) for w in chosen)
        and not any(mentions(w, other) for w in rejected)
    )


def _in(word: str, clause: str) -> bool:
    """`word` (a content word, folded) begins a word of `clause`."""
    return re.search(r"(?<!\w)" + re.escape(word[:4]), clause) is not None
