"""Credentials in memory text (docs/safety.md, "Credentials"): find them, and mask them for display.

`find_secrets(text)` returns the spans that look like a credential: provider API keys
(`sk-…`, `AKIA…`, `ghp_…`, `xoxb-…`, `AIza…`, `m0-…`), JSON Web Tokens, PEM private key
blocks, and assignments such as `password=…` or `token: …` whose value is long enough to
be real. `mask(text)` replaces each of them by a short recognisable prefix and `****`, so
a secret is never printed in full (`AKIAIOSFODNN7EXAMPLE` → `AKIA****`,
`password=hunter2hunter2` → `password=hun****`). Pure functions, standard library only.

The patterns favour recall on well-known formats and precision on assignments: a
placeholder (`token: <your token>`, `password=${DB_PASSWORD}`, `secret: ********`) or a
short plain word (`password: required`) is not a credential.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MASK = "****"
PREFIX_CHARS = 4

# (kind, pattern); a pattern's group "secret" (when present) is the part to mask.
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "private key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?P<secret>[\s\S]*?)"
            r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)"
        ),
    ),
    ("JSON web token", re.compile(r"(?<![\w-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("AWS access key", re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?![A-Za-z0-9])")),
    ("GitHub token", re.compile(r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})")),
    ("Slack token", re.compile(r"(?<![A-Za-z0-9])xox[abposre]-[A-Za-z0-9-]{10,}")),
    ("Google API key", re.compile(r"(?<![A-Za-z0-9])AIza[0-9A-Za-z_-]{35}")),
    ("Stripe key", re.compile(r"(?<![A-Za-z0-9])(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,}")),
    ("API key", re.compile(r"(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,}")),
    ("bearer token", re.compile(r"(?i)(?<![A-Za-z0-9])bearer\s+(?P<secret>[A-Za-z0-9._~+/-]{20,}=*)")),
    ("password in URL", re.compile(r"(?i)(?<![A-Za-z0-9+.-])[a-z][a-z0-9+.-]*://[^/\s:@]+:(?P<secret>[^/\s@]{6,})@")),
    ("mem0 API key", re.compile(r"(?<![A-Za-z0-9_-])m0-[A-Za-z0-9_-]{20,}")),
    (
        "assigned secret",
        re.compile(
            r"(?i)(?<![A-Za-z0-9])(?:password|passwd|pwd|passphrase|secret|client[_-]?secret|"
            r"(?:access|auth|api|bearer|refresh|session)?[_-]?token|api[_-]?key|access[_-]?key|"
            r"secret[_-]?key|private[_-]?key)"
            r"[\"']?\s*(?:=|:|=>)\s*[\"']?(?P<secret>[^\s\"',;]{8,})"
        ),
    ),
)

_PLACEHOLDER = re.compile(r"^(?:[$<{%\[(]|\*{3,}|x{6,}|\.{3})", re.I)


@dataclass(frozen=True)
class SecretMatch:
    kind: str
    start: int  # the span to mask: [start, end)
    end: int


def _plausible_value(value: str) -> bool:
    """An assigned value that could be a real credential (not a placeholder or a plain word)."""
    if _PLACEHOLDER.match(value):
        return False
    if value.isalpha() and value.islower() and len(value) < 16:
        return False  # "password: required", "token: expired"
    return len(set(value)) > 3


def _matches(text: str):
    for kind, pattern in _PATTERNS:
        for found in pattern.finditer(text):
            if "secret" in pattern.groupindex:
                start, end = found.span("secret")
                if kind == "assigned secret" and not _plausible_value(found.group("secret")):
                    continue
                if kind == "private key":
                    start = found.start("secret")
                    end = found.end()
            else:
                start, end = found.span()
            if end > start:
                yield SecretMatch(kind, start, end)


def find_secrets(text: str) -> list[SecretMatch]:
    """Credential spans in `text`, in order, overlapping ones kept once (the earlier wins)."""
    if not isinstance(text, str) or not text:
        return []
    found: list[SecretMatch] = []
    for match in sorted(_matches(text), key=lambda m: (m.start, -m.end)):
        if found and match.start < found[-1].end:
            continue
        found.append(match)
    return found


def secret_kinds(text: str) -> list[str]:
    """The kinds of credential found, in order of appearance, each once."""
    return list(dict.fromkeys(match.kind for match in find_secrets(text)))


def has_secret(text: str) -> bool:
    return bool(find_secrets(text))


def _masked(secret: str) -> str:
    keep = min(PREFIX_CHARS, len(secret) // 4)
    return secret[:keep] + MASK


def mask(text: str) -> str:
    """`text` with every credential cut to a short prefix and `****`."""
    matches = find_secrets(text)
    if not matches:
        return text
    parts, position = [], 0
    for match in matches:
        parts.append(text[position : match.start])
        secret = text[match.start : match.end]
        parts.append(MASK if match.kind == "private key" else _masked(secret))
        position = match.end
    parts.append(text[position:])
    return "".join(parts)
