"""What a typed search becomes in PostgreSQL's terms, and where a snippet is cut (no server needed)."""

from __future__ import annotations

import pytest
from sessionref.catalog.conversation_search import parse_query, snippet
from sessionref.catalog.discovery import like_pattern


@pytest.mark.parametrize(
    ("text", "tsquery", "pending", "status"),
    [
        ("", None, "", "empty"),
        ("   ", None, "", "empty"),
        ("ab", None, "ab", "too_short"),
        ("retry", "retry:*", "", "ok"),
        ("retry ", "retry", "", "ok"),
        ("Retry budg", "retry & budg:*", "", "ok"),
        ("retry bu", "retry", "bu", "ok"),
        ('"retry budget" ok', "(retry <-> budget)", "ok", "ok"),
        ("it's a pg_dump!", "pg_dump:*", "", "ok"),
        ("ö'); DROP TABLE x; --", "drop & table", "", "ok"),
    ],
)
def test_a_search_text_becomes_a_safe_tsquery(
    text: str, tsquery: str | None, pending: str, status: str
) -> None:
    parsed = parse_query(text)
    assert (parsed.tsquery, parsed.pending, parsed.status) == (tsquery, pending, status)


def test_like_characters_in_a_needle_are_literal() -> None:
    assert like_pattern("50%_off\\") == "%50\\%\\_off\\\\%"


def test_a_snippet_is_one_line_around_the_first_match_with_its_spans() -> None:
    text = "x" * 500 + "\nthe Retry budget\nis three"
    line, spans = snippet(text, ("retry", "budget"))
    assert "\n" not in line and "Retry budget" in line
    assert [line[start:end].lower() for start, end in spans] == ["retry", "budget"]


def test_the_index_may_be_asked_for_any_one_of_the_words() -> None:
    assert parse_query("Retry budg").terms == ("retry", "budg:*")
    assert parse_query('"retry budget" mig').terms == ("retry", "budget", "mig:*")
    assert parse_query("retry mig retry ").terms == ("retry", "mig")
    assert parse_query("retry bu").terms == ("retry",)
