"""`bounded_excerpt`: input echoed into a message is cut to a head…tail excerpt past a bound."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sessionref.errors import EXCERPT_ELLIPSIS, bounded_excerpt


def test_text_within_the_bound_is_returned_itself() -> None:
    text = "x" * 10
    assert bounded_excerpt(text, 10) is text
    assert bounded_excerpt("", 0) == ""


def test_longer_text_keeps_head_and_tail_around_an_ellipsis() -> None:
    assert bounded_excerpt("abcdefghij", 5) == "abc…ij"
    assert bounded_excerpt("abcdefghij", 9, keep=4) == "ab…ij"
    assert bounded_excerpt("x" * 10_000_000, 100).count("x") == 100


def test_a_pair_given_as_two_code_points_is_never_cut_in_half() -> None:
    pair = "\ud83d\ude00"
    assert bounded_excerpt("a" + pair + "bcdef", 4, keep=3) == "a…f"  # head would end on the high half
    assert bounded_excerpt("abcde" + pair + "f", 4, keep=2) == "a…f"  # tail would start on the low half
    assert bounded_excerpt("ab\ud800cdef", 4) == "ab…ef"  # a lone half is an ordinary character


PIECES = st.sampled_from(["a", "\ud83d", "\ude00", "\ud83d\ude00", "\U0001f600"])


@settings(max_examples=300, deadline=None)
@given(st.lists(PIECES, max_size=30).map("".join), st.integers(0, 20))
def test_an_excerpt_is_bounded_and_made_of_the_text_ends(text: str, limit: int) -> None:
    excerpt = bounded_excerpt(text, limit)
    if len(text) <= limit:
        assert excerpt == text
        return
    head, _, tail = excerpt.partition(EXCERPT_ELLIPSIS)
    assert len(head) + len(tail) <= limit
    assert text.startswith(head)
    assert text.endswith(tail)


@pytest.mark.parametrize(("limit", "excerpt"), [(0, "…"), (1, "a…"), (2, "a…c")])
def test_tiny_bounds(limit: int, excerpt: str) -> None:
    assert bounded_excerpt("abc", limit) == excerpt
