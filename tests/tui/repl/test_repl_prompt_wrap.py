"""The prompt wraps long lines between words, and only new lines get the continuation marker."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from prompt_toolkit.layout.processors import TransformationInput
from rich.cells import cell_len
from sessionref_tui.repl.prompt_wrap import WordWrapProcessor, continuation, wrap_padding


def rows_on_screen(text: str, capacity: int) -> list[str]:
    """How prompt_toolkit lays `text` out in rows of `capacity` cells (a char that does not fit wraps)."""
    rows = [""]
    for char in text:
        if cell_len(rows[-1]) + cell_len(char) > capacity:
            rows.append("")
        rows[-1] += char
    return rows


def shown(text: str, capacity: int) -> str:
    padding = wrap_padding(text, capacity)
    return "".join(" " * padding.get(index, 0) + char for index, char in enumerate(text))


def test_a_word_that_would_straddle_the_edge_starts_the_next_row() -> None:
    text = "this is a fairly long message that will wrap because it is long"
    assert rows_on_screen(text, 20)[0] == "this is a fairly lon"  # prompt_toolkit alone cuts the word
    assert [row.rstrip() for row in rows_on_screen(shown(text, 20), 20)] == [
        "this is a fairly",
        "long message that",
        "will wrap because it",
        " is long",
    ]


def test_a_word_longer_than_a_row_is_still_cut() -> None:
    assert wrap_padding("x " + "y" * 30, 10) == {}


@given(
    st.lists(st.sampled_from(["a", "bb", "ccccc", "漢字", "dddddddddddd", " "]), max_size=40),
    st.integers(min_value=4, max_value=30),
)
def test_words_that_fit_a_row_are_never_split(pieces: list[str], capacity: int) -> None:
    text = " ".join(pieces)
    rows = rows_on_screen(shown(text, capacity), capacity)
    assert "".join(rows).replace(" ", "") == text.replace(" ", "")  # only spaces were added
    if all(cell_len(word) <= capacity for word in text.split()):
        assert [word for row in rows for word in row.split()] == text.split()


def transform(text: str, width: int) -> Any:
    fake = SimpleNamespace(width=width)
    fragments = [("class:x", text)]
    return WordWrapProcessor(gutter_cells=2).apply_transformation(
        TransformationInput(fake, None, 0, lambda i: i, fragments, width, 10)
    )  # type: ignore[arg-type]


def test_the_processor_only_adds_padding_and_maps_positions_both_ways() -> None:
    text = "aaaa bbbb cccc"
    result = transform(text, 2 + 7)  # 7 cells for text: "aaaa" / "bbbb" / "cccc"
    display = "".join(fragment[1] for fragment in result.fragments)
    assert display == "aaaa   bbbb   cccc"
    for position in range(len(text) + 1):
        assert result.display_to_source(result.source_to_display(position)) == position
    assert result.source_to_display(5) == 7  # the b of bbbb after three cells of padding
    assert result.display_to_source(5) == 5  # a click in the padding lands on the word


def test_a_line_that_fits_is_left_alone() -> None:
    result = transform("short", 40)
    assert "".join(fragment[1] for fragment in result.fragments) == "short"


def test_only_a_new_line_gets_the_marker() -> None:
    assert continuation(2, 1, 0) == ". "
    assert continuation(2, 0, 1) == "  "
