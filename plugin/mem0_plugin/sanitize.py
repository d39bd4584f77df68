"""Printing memory text on a terminal without letting it drive the terminal (docs/safety.md).

`printable(text)` returns one line of inert text:

* newlines (``\\n``, ``\\r\\n``, U+2028, U+2029) and tabs become single spaces, so a memory
  can never start a fake line of the report;
* every other control character — C0 (ESC included), DEL, C1 (the 8-bit CSI ``\\x9b``,
  OSC ``\\x9d`` and ST ``\\x9c`` included) and a lone carriage return — is replaced by its
  visible escape (``\\x1b``, ``\\r``, ``\\x9b``). An ANSI/terminal escape sequence (CSI,
  OSC, DCS, ...) only acts through its introducer, so ``ESC [ 31 m`` prints as the inert
  text ``\\x1b[31m``: the sequence is neutralised and stays visible to the reader;
* Unicode bidirectional controls (U+061C, U+200E/F, U+202A–U+202E, U+2066–U+2069),
  which can make text display in an order other than the one stored, become ``\\u202e``
  style escapes;
* lone surrogates (which cannot be encoded for the terminal) become ``\\ud800`` escapes.

Everything else — letters of any script, emoji, backslashes — is left unchanged. Pure and
fast: one ``str.replace`` and one ``str.translate`` with a constant table.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

_SPACE_CHARS = ("\n", "\t", "\u2028", "\u2029")
_BIDI_CHARS = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))


def _escape_table() -> Mapping[int, str]:
    table: dict[int, str] = {}
    for code in (*range(0x20), 0x7F, *range(0x80, 0xA0)):
        table[code] = "\\r" if code == 0x0D else f"\\x{code:02x}"
    for code in (*_BIDI_CHARS, *range(0xD800, 0xE000)):
        table[code] = f"\\u{code:04x}"
    for char in _SPACE_CHARS:
        table[ord(char)] = " "
    return MappingProxyType(table)


_ESCAPES = _escape_table()


def printable(text: str) -> str:
    """`text` as one inert line: control characters, escape sequences and bidi controls made visible."""
    return text.replace("\r\n", "\n").translate(_ESCAPES)


# JSON text keeps C0 controls escaped already (json.dumps does); what it leaves raw and a terminal
# acts on — DEL, the C1 controls (8-bit CSI/OSC), bidi controls, line separators, lone surrogates —
# is written as a \uXXXX escape: outside strings JSON text never holds these characters, inside
# them the escape is the same character to any JSON reader.
_JSON_ESCAPES = MappingProxyType(
    {
        code: f"\\u{code:04x}"
        for code in (0x7F, *range(0x80, 0xA0), *_BIDI_CHARS, 0x2028, 0x2029, *range(0xD800, 0xE000))
    }
)


def inert_json(text: str) -> str:
    """JSON text (`json.dumps(..., ensure_ascii=False)`) made safe to print: the same JSON value,
    with the characters that could drive a terminal written as escapes."""
    return text.translate(_JSON_ESCAPES)
