"""`one_line_excerpt`: how a model error or a demo reply quotes data on one inert line."""

from __future__ import annotations

import pytest
from sessionref.contract.terminal_text import has_unsafe_characters
from sessionref.models.base import one_line_excerpt


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain words", "plain words"),
        ("\x1b[31mred\x1b[0m", "[31mred[0m"),  # ESC removed: the rest is harmless text
        ("one\ntwo\r\nthree\tfour", "one two three four"),  # line breaks and tabs separate words
        ("left\u202eright \u2066iso\u2069", "leftright iso"),
        ("a\u2028b", "a b"),
        ("  spaced   out  ", "spaced out"),
    ],
)
def test_unsafe_characters_go_and_whitespace_collapses(text: str, shown: str) -> None:
    assert one_line_excerpt(text, 100) == shown


def test_a_long_text_is_cut_with_an_ellipsis() -> None:
    assert one_line_excerpt("word " * 50, 12) == "word word w…"


def test_the_result_is_always_safe() -> None:
    hostile = "".join(chr(code) for code in [*range(0x00, 0x20), *range(0x7F, 0xA0), 0x202E, 0xD800])
    assert not has_unsafe_characters(one_line_excerpt(hostile + "end", 500))
