"""The text of a merged memory (docs/dream.md, "Step 3: analyse": it keeps every significant
word of its sources).

`draft_text(sources, union)` takes the source texts ranked best first (see
`merging.source_rank`: most significant words, then longest, then newest) and the union
of their significant words:

* if the best source already holds every significant word of the group, the draft is
  that source's text, verbatim;
* otherwise it is the best source's text with the missing words appended in the form
  they were written in: ``Use PostgreSQL for auth (also: DB).`` (a final ``.`` or ``!``
  moves after the parenthesis). Words are listed in the order they first occur in the
  other sources, best source first.

The result is checked, never assumed: `draft_text` returns None when the draft's
significant words are not exactly the union (the caller then proposes no merge).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..language.features import cased_words
from ..language.text import fold_plural, significant_words


def draft_text(sources: Sequence[str], union: frozenset[str]) -> str | None:
    """The merged text for `sources` (best first) whose significant words are `union`; None if impossible."""
    base = sources[0]
    base_words = significant_words(base)
    missing = union - base_words
    if not missing:
        return base if base_words == union else None
    draft = append_words(base, surface_forms(missing, sources[1:]))
    return draft if significant_words(draft) == union else None


def surface_forms(missing: frozenset[str], texts: Sequence[str]) -> list[str]:
    """Each missing significant word as first written in `texts` ("DB" for ``db``), in order of appearance."""
    forms: list[str] = []
    found: set[str] = set()
    for text in texts:
        for token in cased_words(text):
            word = fold_plural(token.lower().replace("’", "'"))
            if word in missing and word not in found and significant_words(token) == {word}:
                found.add(word)
                forms.append(token)
    forms.extend(sorted(missing - found))
    return forms


def append_words(base: str, additions: Sequence[str]) -> str:
    body = base.rstrip()
    end = ""
    if body.endswith((".", "!")) and not body.endswith(("..", "!!")):
        body, end = body[:-1].rstrip(), body[-1]
    return f"{body} (also: {', '.join(additions)}){end}"
