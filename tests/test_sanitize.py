"""sanitize.printable: memory text can never drive the terminal it is printed on."""

from __future__ import annotations

import pytest
from mem0_plugin.sanitize import printable

CASES = [
    ("plain text", "plain text"),
    ("ünïcode, 漢字, emoji 🎉 and a back\\slash", "ünïcode, 漢字, emoji 🎉 and a back\\slash"),
    ("two\nlines", "two lines"),
    ("windows\r\nline", "windows line"),
    ("tab\tseparated", "tab separated"),
    ("line\u2028separator\u2029para", "line separator para"),
    ("fake\rprefix", "fake\\rprefix"),
    ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),  # CSI (colour)
    ("\x1b[2J\x1b[H", "\\x1b[2J\\x1b[H"),  # clear screen, cursor home
    ("\x1b]0;evil title\x07", "\\x1b]0;evil title\\x07"),  # OSC (window title), BEL
    ("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "\\x1b]8;;http://x\\x1b\\link\\x1b]8;;\\x1b\\"),  # OSC 8 hyperlink
    ("\x1bP+q\x1b\\", "\\x1bP+q\\x1b\\"),  # DCS
    ("\x9b31m8-bit CSI\x9d8-bit OSC\x9c", "\\x9b31m8-bit CSI\\x9d8-bit OSC\\x9c"),
    ("nul\x00bell\x07back\x08del\x7f", "nul\\x00bell\\x07back\\x08del\\x7f"),
    ("vt\x0bff\x0c", "vt\\x0bff\\x0c"),
    ("abc\u202edcba", "abc\\u202edcba"),  # right-to-left override
    ("\u202a\u202b\u202c\u202d", "\\u202a\\u202b\\u202c\\u202d"),
    ("\u2066iso\u2067late\u2068first\u2069", "\\u2066iso\\u2067late\\u2068first\\u2069"),
    ("\u200emarks\u200f\u061c", "\\u200emarks\\u200f\\u061c"),
    ("lone \ud800 surrogate", "lone \\ud800 surrogate"),
    ("", ""),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_printable(text, expected):
    assert printable(text) == expected


@pytest.mark.parametrize(("text", "_"), CASES)
def test_result_is_one_inert_line_encodable_as_utf8(text, _):
    shown = printable(text)
    assert all(ch.isprintable() or ch == " " for ch in shown)
    assert "\n" not in shown and "\r" not in shown and "\x1b" not in shown
    shown.encode("utf-8")


def test_printable_is_fast_on_large_text():
    text = "memory text with \x1b[31m escapes \u202e and\nnewlines " * 20_000
    assert printable(text).count("\\x1b") == 20_000
