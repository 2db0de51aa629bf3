"""Snippets of conversation matches: inert pieces split at the spans, fitted so the match shows."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len
from sessionref_tui.snippets import fit_snippet, marked_snippet, role_label, snippet_pieces


def joined(pieces: list[tuple[str, bool]]) -> str:
    return "".join(text for text, _ in pieces)


def test_pieces_flag_the_matches_and_escape_each_piece_on_its_own() -> None:
    snippet = "a \x1b[2J b pg_dump c"
    start = snippet.index("pg_dump")
    pieces = snippet_pieces(snippet, [(start, start + 7)])
    assert pieces == [("a \\x1b[2J b ", False), ("pg_dump", True), (" c", False)]


def test_spans_are_clipped_to_the_text_and_to_each_other_and_empty_ones_dropped() -> None:
    assert snippet_pieces("abcdef", [(4, 99), (2, 5), (1, 1), (-3, 1)]) == [
        ("a", True),
        ("b", False),
        ("cde", True),
        ("f", True),
    ]


def test_text_that_fits_is_unchanged() -> None:
    pieces = snippet_pieces("short one", [(0, 5)])
    assert fit_snippet(pieces, 40) == pieces


def test_a_match_past_the_edge_is_brought_in_with_a_little_context() -> None:
    snippet = "word " * 20 + "the retry budget was decided here"
    start = snippet.index("budget")
    fitted = fit_snippet(snippet_pieces(snippet, [(start, start + 6)]), 30)
    text = joined(fitted)
    assert text.startswith("…") and text.endswith("…") and cell_len(text) <= 30
    assert ("budget", True) in fitted
    assert text.index("budget") >= 5  # some words before it are kept


def test_wide_characters_are_never_split() -> None:
    snippet = "数据库迁移" * 10 + "用pg_dump"
    start = snippet.index("pg_dump")
    fitted = fit_snippet(snippet_pieces(snippet, [(start, start + 7)]), 21)
    assert cell_len(joined(fitted)) <= 21 and "pg_dump" in joined(fitted)


def test_marked_plain_text_for_the_cli() -> None:
    assert marked_snippet("use pg_dump now", [(4, 11)]) == "use «pg_dump» now"


def test_roles() -> None:
    assert [role_label("user", False), role_label("assistant", False), role_label("user", True)] == [
        "you",
        "assistant",
        "checkpoint",
    ]


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(max_size=200),
    spans=st.lists(st.tuples(st.integers(-5, 210), st.integers(-5, 210)), max_size=4),
    width=st.integers(0, 80),
)
def test_fitting_is_bounded_and_inert_for_any_text(
    text: str, spans: list[tuple[int, int]], width: int
) -> None:
    fitted = fit_snippet(snippet_pieces(text, spans), width)
    shown = joined(fitted)
    assert cell_len(shown) <= max(width, 0)
    assert not any(ord(char) < 0x20 or 0x7F <= ord(char) <= 0x9F for char in shown)
