"""`wrap_cells`: word wrapping by terminal cells for the line mode's transcript."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len
from sessionref_tui.display import wrap_cells


def test_breaks_between_words_and_drops_the_spaces_at_the_break() -> None:
    assert wrap_cells("hello world foo bar", 11) == ["hello world", "foo bar"]
    assert wrap_cells("ab  cd", 5) == ["ab", "cd"]


def test_a_line_that_fits_is_returned_unchanged() -> None:
    assert wrap_cells("  keep   my  spaces ", 40) == ["  keep   my  spaces "]
    assert wrap_cells("", 5) == [""]


def test_the_first_rows_indentation_is_kept() -> None:
    assert wrap_cells("  indented text that wraps here", 10) == ["  indented", "text that", "wraps here"]


def test_a_word_wider_than_the_row_is_cut_where_the_cells_run_out() -> None:
    assert wrap_cells("averyveryverylongword and more", 8) == ["averyver", "yverylon", "gword", "and more"]


def test_wide_characters_are_never_split() -> None:
    assert wrap_cells("漢字漢字漢字 ab", 5) == ["漢字", "漢字", "漢字", "ab"]


words = st.text(alphabet=st.sampled_from("ab漢 é"), max_size=60)


@given(words, st.integers(min_value=2, max_value=30))
def test_rows_fit_and_no_visible_character_is_lost(line: str, width: int) -> None:
    rows = wrap_cells(line, width)
    assert all(cell_len(row) <= width for row in rows)
    assert "".join(rows).replace(" ", "") == line.replace(" ", "")
