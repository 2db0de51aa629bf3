"""bounded_excerpt keeps short text and both ends of long text, within a bound."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sessionref.contract.excerpts import bounded_excerpt


def test_short_text_is_kept_as_is() -> None:
    assert bounded_excerpt("hello", 5) == "hello"


def test_long_text_keeps_head_and_tail_and_says_how_much_was_left_out() -> None:
    text = "HEAD" + "x" * 10_000_000 + "TAIL"
    excerpt = bounded_excerpt(text, 30)
    assert excerpt.startswith("HEAD") and excerpt.endswith("TAIL")
    assert "[9999978 characters left out]" in excerpt
    assert len(excerpt) < 70


def test_the_bound_must_leave_room_for_both_ends() -> None:
    with pytest.raises(ValueError, match="at least 2"):
        bounded_excerpt("abc", 1)


@given(st.text(max_size=500), st.integers(min_value=2, max_value=300))
def test_an_excerpt_is_bounded_and_keeps_both_ends(text: str, limit: int) -> None:
    excerpt = bounded_excerpt(text, limit)
    if len(text) <= limit:
        assert excerpt == text
    else:
        assert len(excerpt) <= limit + len(f"…[{len(text)} characters left out]…")
        assert text.startswith(excerpt.split("…[")[0])
        assert text.endswith(excerpt.rsplit("]…", 1)[1])
