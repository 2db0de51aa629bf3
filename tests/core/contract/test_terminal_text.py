"""Terminal-safe text: the one set of unsafe characters, `inert`, `inert_lines` and the JSON variant."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sessionref.contract.terminal_text import (
    UNSAFE_CHARACTER,
    has_unsafe_characters,
    inert,
    inert_lines,
    terminal_safe_json,
)

BIDI_CONTROLS = [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
UNSAFE_CODES = [
    *range(0x00, 0x20),
    *range(0x7F, 0xA0),
    *BIDI_CONTROLS,
    0x2028,
    0x2029,
    0xD800,
    0xDBFF,
    0xDFFF,
]

# Any text at all, lone surrogates included (hypothesis' default text() leaves them out).
ANY_TEXT = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF))


def spelled_out(code: int) -> str:
    """How the app has always shown one unsafe character (pinned by its inert-rendering tests)."""
    return f"\\x{code:02x}" if code <= 0x9F else f"\\u{code:04x}"


@pytest.mark.parametrize("code", UNSAFE_CODES)
def test_each_unsafe_character_is_spelled_out(code: int) -> None:
    assert inert(f"a{chr(code)}b") == f"a{spelled_out(code)}b"
    assert has_unsafe_characters(chr(code))


@pytest.mark.parametrize(
    "text",
    ["plain", "naïve café 漢字 😀", "\u00a0nbsp", "zero\u200bwidth", "👩\u200d💻", "[bold]markup[/bold]", ""],
)
def test_safe_text_is_returned_unchanged(text: str) -> None:
    assert inert(text) == text
    assert not has_unsafe_characters(text)


def test_an_escape_sequence_becomes_visible_text_on_one_line() -> None:
    assert inert("\x1b]0;owned\x07\x1b[2J\nnext\r") == "\\x1b]0;owned\\x07\\x1b[2J\\x0anext\\x0d"


@given(ANY_TEXT)
def test_inert_output_is_always_safe_and_encodable(text: str) -> None:
    shown = inert(text)
    assert not has_unsafe_characters(shown)
    shown.encode("utf-8")  # never raises: no lone surrogate survives


@given(ANY_TEXT)
def test_inert_changes_exactly_the_unsafe_characters(text: str) -> None:
    expected = "".join(spelled_out(ord(char)) if UNSAFE_CHARACTER.fullmatch(char) else char for char in text)
    assert inert(text) == expected


def test_inert_lines_keeps_line_breaks_and_nothing_else() -> None:
    assert inert_lines("one\x1b[31m\ntwo\rthree\n") == "one\\x1b[31m\ntwo\\x0dthree\n"


@given(ANY_TEXT)
def test_inert_lines_is_inert_per_line(text: str) -> None:
    assert inert_lines(text).split("\n") == [inert(line) for line in text.split("\n")]


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | ANY_TEXT,
        lambda inner: st.lists(inner) | st.dictionaries(ANY_TEXT, inner),
        max_leaves=12,
    )
)
def test_terminal_safe_json_parses_back_to_the_value_and_is_safe(value: object) -> None:
    compact = terminal_safe_json(value, compact=True)
    assert not has_unsafe_characters(compact)
    assert json.loads(compact) == value
    pretty = terminal_safe_json(value)
    assert not has_unsafe_characters(pretty.replace("\n", ""))
    assert json.loads(pretty) == value


def test_terminal_safe_json_keeps_readable_text_and_escapes_the_rest() -> None:
    value = {"title": "café \u202egnp.exe \x85 \x1b", "id": "\ud800"}
    assert terminal_safe_json(value, compact=True) == (
        '{"title":"café \\u202egnp.exe \\u0085 \\u001b","id":"\\ud800"}'
    )
    assert terminal_safe_json([1], indent=None) == "[1]"
    assert terminal_safe_json([1]) == "[\n  1\n]"
