"""Snippets: one bounded line of the original text, match spans relative to it, hostile text as data."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from sessionref.textsearch.normalize import fold
from sessionref.textsearch.query import parse_query
from sessionref.textsearch.snippet import ELLIPSIS, SNIPPET_CHARS, SNIPPET_SCAN_CHARS, make_snippet

LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def snippet(text: str, query: str):
    return make_snippet(text, parse_query(query).phrases)


def marked(text: str, query: str) -> list[str]:
    result = snippet(text, query)
    return [result.text[start:end] for start, end in result.spans]


def test_the_match_is_shown_in_its_original_spelling() -> None:
    assert marked("We ran the MIGRATION on Zürich", "zurich migr") == ["MIGR", "Zürich"]
    assert marked("Straße und STRASSE", "strasse") == ["Straße", "STRASSE"]
    assert marked("数据库迁移很慢，需要用pg_dump", "数据库 pg_dump") == ["数据库", "pg_dump"]
    assert marked("ＡＢＣ and ﬁle", "abc file") == ["ＡＢＣ", "ﬁle"]


def test_words_match_at_word_starts_and_phrases_across_punctuation() -> None:
    assert marked("remigrate, then migrate", "migr") == ["migr"]
    assert marked("use pg-dump or pg_dump", "pg_dump") == ["pg-dump", "pg_dump"]
    assert marked("budgeting the budget", "budget ") == ["budget"]


def test_a_match_far_in_gets_context_and_ellipses() -> None:
    text = "word " * 100 + "the flag we found" + " tail" * 100
    result = snippet(text, "flag")
    assert result.text.startswith(ELLIPSIS) and result.text.endswith(ELLIPSIS)
    assert len(result.text) <= SNIPPET_CHARS + 2
    assert [result.text[s:e] for s, e in result.spans] == ["flag"]


def test_line_breaks_become_spaces_and_runs_collapse() -> None:
    result = snippet("first line\n\n   second\tline\r\nthe match\u2028here", "match")
    assert result.text == "first line second line the match here"
    assert [result.text[s:e] for s, e in result.spans] == ["match"]
    assert not any(char in result.text for char in LINE_BREAKS)


def test_escape_sequences_markup_and_bidi_controls_stay_data() -> None:
    text = "\x1b[31mred\x1b[0m [bold]markup[/bold] \u202eevil\u202c flag \x07"
    result = snippet(text, "flag")
    assert result.text == text
    assert [result.text[s:e] for s, e in result.spans] == ["flag"]


def test_a_one_megabyte_line_gives_a_bounded_snippet() -> None:
    line = "x" * 1_000_000
    assert len(snippet(line, "flag").text) <= SNIPPET_CHARS + 2
    early = "flag " + line
    assert marked(early, "flag") == ["flag"]
    late = "y" * 600_000 + " flag " + line  # beyond the scanned part: the start, no spans
    result = snippet(late, "flag")
    assert SNIPPET_SCAN_CHARS < 600_000
    assert result.spans == () and result.text.startswith("yyy") and len(result.text) <= SNIPPET_CHARS + 2


def test_no_match_shows_the_start() -> None:
    assert snippet("short text", "absent") == make_snippet("short text", ())
    assert snippet("short text", "absent").text == "short text"


FILLER = st.lists(st.sampled_from([*"ab xyzÉé,.\n\t\x1b\u202e界", "  ", "ß", "e\u0301"]), max_size=200).map(
    "".join
)
WORD = st.sampled_from(["migration", "Zürich", "STRASSE", "café", "pg_dump", "数据库"])


@settings(max_examples=400, deadline=None)
@given(FILLER, WORD, FILLER, st.sampled_from([str.upper, str.lower, str.title, lambda s: s]))
def test_spans_are_bounded_and_cover_text_that_folds_to_the_query(
    before: str, word: str, after: str, case
) -> None:
    text = before + " " + case(word) + " " + after
    result = snippet(text, word)
    assert len(result.text) <= SNIPPET_CHARS + 2
    assert not any(char in result.text for char in LINE_BREAKS)
    assert list(result.spans) == sorted(result.spans)
    assert result.spans, "the inserted word is always found"
    for start, end in result.spans:
        assert 0 <= start < end <= len(result.text)
        shown = fold(result.text[start:end])
        assert shown.replace("-", " ").replace("_", " ").startswith(fold(word)[:3].replace("_", " "))


def test_a_phrase_is_marked_whole_before_a_word_it_starts_with() -> None:
    assert marked("the retry budget, then a retry", '"retry budget" retry ') == ["retry budget", "retry"]
    assert marked("retrying the retry_budget", "retry budget ") == ["retry", "budget"]
    assert marked("xretry retryx retry", "retry ") == ["retry"]
