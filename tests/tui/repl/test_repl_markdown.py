"""Markdown replies in the line mode: structure rendered, data inert, blocks found while streaming."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len
from rich.style import Style
from sessionref_tui.repl.markdown import (
    fragment_style,
    keep_line_breaks,
    markdown_lines,
    split_complete_blocks,
)


def plain(lines: list[list[tuple[str, str]]]) -> list[str]:
    return ["".join(text for _style, text in line) for line in lines]


def styles_of(lines: list[list[tuple[str, str]]], needle: str) -> list[str]:
    return [style for line in lines for style, text in line if needle in text]


def test_emphasis_and_code_are_styled_and_their_markers_gone() -> None:
    lines = markdown_lines("Use **bold**, _it_ and `code`.", 60)
    assert plain(lines) == ["Use bold, it and code."]
    assert "bold" in styles_of(lines, "bold")[0].split()
    assert "italic" in styles_of(lines, "it")[-1].split()


def test_lists_headings_and_quotes_keep_their_structure() -> None:
    lines = plain(markdown_lines("# Plan\n\n1. first\n2. second\n\n- a\n\n> quoted", 60))
    assert lines[0] == "Plan"  # headings start at the margin like everything else
    assert " 1 first" in lines and " 2 second" in lines and " • a" in lines
    assert "▌ quoted" in lines


def test_links_are_written_out_never_sent_as_terminal_hyperlinks() -> None:
    lines = markdown_lines("see [the docs](https://example.org/x)", 60)
    assert plain(lines) == ["see the docs (https://example.org/x)"]
    assert not any("link" in style or "]8;" in text for line in lines for style, text in line)


def test_raw_html_is_shown_as_typed_not_dropped() -> None:
    assert plain(markdown_lines("read Vec<String> from <stdin>\n\n<div>block</div>", 60)) == [
        "read Vec<String> from <stdin>",
        "",
        "<div>block</div>",
    ]


def test_escape_sequences_in_the_text_are_shown_escaped() -> None:
    hostile = "**hi** \x1b[2J \x1b]0;title\x07 \x9b31m\n```\n\x1b[31mred\n```"
    lines = markdown_lines(hostile, 60)
    texts = [text for line in lines for _style, text in line]
    assert not any(ord(char) < 0x20 or 0x7F <= ord(char) <= 0x9F for text in texts for char in text)
    assert "hi \\x1b[2J \\x1b]0;title\\x07 \\x9b31m" in plain(lines)


def test_tabs_become_spaces() -> None:
    assert plain(markdown_lines("```\nif x:\n\treturn 1\n```", 60))[-1].strip() == "return 1"


def test_a_line_break_stays_a_line_break_outside_code() -> None:
    lines = plain(markdown_lines("roses are red\nviolets are blue", 60))
    assert lines == ["roses are red", "violets are blue"]
    assert keep_line_breaks("```\na\nb\n```") == "```\na\nb\n```"


@given(
    st.lists(st.sampled_from(["alpha", "be", "gammadelta", "漢字", "x"]), min_size=1, max_size=40),
    st.integers(min_value=12, max_value=60),
)
def test_paragraphs_fit_the_width_and_words_are_not_split(words: list[str], width: int) -> None:
    lines = plain(markdown_lines(" ".join(words), width))
    assert all(cell_len(line) <= width for line in lines)
    assert " ".join(lines).split() == words


def test_complete_blocks_end_at_a_blank_line_once_the_next_block_starts() -> None:
    assert split_complete_blocks("one\n\ntw") == ("one\n\n", "tw")
    assert split_complete_blocks("one\n\n") == ("", "one\n\n")  # the next block has not started
    assert split_complete_blocks("one\ntwo") == ("", "one\ntwo")


def test_blank_lines_inside_a_fence_or_before_an_indented_line_do_not_end_a_block() -> None:
    assert split_complete_blocks("```\na\n\nb\n```\n\nnext") == ("```\na\n\nb\n```\n\n", "next")
    assert split_complete_blocks("- item\n\n  more of it\n\nnext") == ("- item\n\n  more of it\n\n", "next")
    assert split_complete_blocks("~~~\na\n\nstill code") == ("", "~~~\na\n\nstill code")


def test_rich_styles_become_prompt_toolkit_styles() -> None:
    assert fragment_style(Style(color="red", bold=True)) == "ansired bold"
    assert fragment_style(Style(color="#102030", bgcolor="color(236)", italic=False)) == (
        "#102030 bg:#303030 noitalic"
    )
    assert fragment_style(Style(link="https://evil", underline=True)) == "underline"
    assert fragment_style(None) == ""
