"""Tests for the pure display helpers: inert text, ages, truncation and match spans."""

from __future__ import annotations

import pytest
from rich.cells import cell_len
from rich.text import Text
from sessionref_tui.display import (
    format_bytes,
    home_relative,
    inert,
    match_spans,
    relative_age,
    truncate_end,
    truncate_middle,
    truncate_start,
)

MINUTE = 60_000
HOUR = 60 * MINUTE
DAY = 24 * HOUR


class TestInert:
    @pytest.mark.parametrize(
        ("raw", "shown"),
        [
            ("plain title", "plain title"),
            ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),
            ("\x1b]0;pwned\x07", "\\x1b]0;pwned\\x07"),
            ("\x1b]8;;http://evil\x1b\\link", "\\x1b]8;;http://evil\\x1b\\link"),
            ("a\nb", "a\\x0ab"),
            ("a\r\nb", "a\\x0d\\x0ab"),
            ("tab\there", "tab\\x09here"),
            ("nul\x00", "nul\\x00"),
            ("del\x7f", "del\\x7f"),
            ("csi\x9b2J", "csi\\x9b2J"),
            ("evil\x1b\x07\u009b\ns", "evil\\x1b\\x07\\x9b\\x0as"),
            ("abc\u202edcba", "abc\\u202edcba"),
            ("\u2066iso\u2069", "\\u2066iso\\u2069"),
            ("line\u2028sep", "line\\u2028sep"),
            ("lone \ud800 surrogate", "lone \\ud800 surrogate"),
        ],
    )
    def test_control_and_format_characters_are_escaped(self, raw: str, shown: str) -> None:
        assert inert(raw) == shown

    def test_result_has_no_control_characters_for_any_code_point_below_0xa0(self) -> None:
        raw = "".join(chr(code) for code in range(0xA0))
        shown = inert(raw)
        assert all(0x20 <= ord(char) < 0x7F for char in shown)

    def test_markup_stays_literal_when_rendered_through_text(self) -> None:
        shown = inert("[bold red]boom[/] \x1b[1m")
        assert Text(shown).plain == "[bold red]boom[/] \\x1b[1m"
        assert Text(shown).spans == []

    def test_unicode_text_and_emoji_are_kept(self) -> None:
        assert inert("源会话 😀 café") == "源会话 😀 café"


class TestRelativeAge:
    @pytest.mark.parametrize(
        ("age_ms", "label"),
        [
            (0, "just now"),
            (59_999, "just now"),
            (-5 * MINUTE, "just now"),
            (MINUTE, "1m"),
            (119_000, "1m"),
            (5 * MINUTE, "5m"),
            (HOUR - 1, "59m"),
            (3 * HOUR, "3h"),
            (DAY - 1, "23h"),
            (2 * DAY, "2d"),
            (6 * DAY, "6d"),
            (7 * DAY, "1w"),
            (29 * DAY, "4w"),
            (364 * DAY, "52w"),
            (365 * DAY, "1y"),
            (800 * DAY, "2y"),
        ],
    )
    def test_units(self, age_ms: int, label: str) -> None:
        now = 1_800_000_000_000
        assert relative_age(now - age_ms, now) == label


class TestTruncateEnd:
    def test_fitting_text_is_unchanged(self) -> None:
        assert truncate_end("hello", 5) == "hello"

    def test_long_text_is_cut_with_ellipsis(self) -> None:
        assert truncate_end("hello world", 6) == "hello…"

    @pytest.mark.parametrize("width", [0, -3])
    def test_no_room_gives_empty(self, width: int) -> None:
        assert truncate_end("hello", width) == ""

    def test_width_one_is_only_the_ellipsis(self) -> None:
        assert truncate_end("hello", 1) == "…"

    def test_wide_characters_are_not_split(self) -> None:
        result = truncate_end("会话会话会话", 6)
        assert result == "会话…"
        assert cell_len(result) <= 6


class TestTruncateMiddle:
    def test_fitting_text_is_unchanged(self) -> None:
        assert truncate_middle("/home/me", 20) == "/home/me"

    def test_keeps_both_ends(self) -> None:
        result = truncate_middle("/home/someone/projects/very-long-name/app", 20)
        assert cell_len(result) == 20
        assert result.startswith("/home/s")
        assert result.endswith("name/app")
        assert "…" in result

    def test_tail_gets_the_larger_share(self) -> None:
        assert truncate_middle("abcdefghij", 6) == "ab…hij"

    def test_wide_characters(self) -> None:
        result = truncate_middle("会话会话会话会话", 7)
        assert cell_len(result) <= 7
        assert result.startswith("会") and result.endswith("话") and "…" in result

    def test_zero_width(self) -> None:
        assert truncate_middle("abc", 0) == ""


class TestMatchSpans:
    def test_case_insensitive_all_occurrences(self) -> None:
        assert match_spans("Notes and NOTES", "notes") == [(0, 5), (10, 15)]

    def test_empty_needle_matches_nothing(self) -> None:
        assert match_spans("abc", "") == []

    def test_no_match(self) -> None:
        assert match_spans("abc", "x") == []

    def test_occurrences_do_not_overlap(self) -> None:
        assert match_spans("aaaa", "aa") == [(0, 2), (2, 4)]

    def test_positions_index_the_original_text_when_lowering_grows_a_character(self) -> None:
        text = "İstanbul notes"
        assert match_spans(text, "notes") == [(9, 14)]
        assert text[9:14] == "notes"

    def test_spans_cut_the_original_text_exactly(self) -> None:
        text = "Research Notes: research"
        for start, end in match_spans(text, "RESEARCH"):
            assert text[start:end].lower() == "research"


class TestFormatBytes:
    @pytest.mark.parametrize(
        ("count", "shown"),
        [(0, "0 B"), (1023, "1023 B"), (1024, "1.0 KB"), (18_637, "18.2 KB"), (3_565_158, "3.4 MB")],
    )
    def test_units(self, count: int, shown: str) -> None:
        assert format_bytes(count) == shown


class TestHomeRelative:
    def test_the_home_folder_becomes_a_tilde(self) -> None:
        assert home_relative("/home/ana/src/app", "/home/ana") == "~/src/app"
        assert home_relative("/home/ana", "/home/ana/") == "~"

    def test_only_a_whole_leading_folder_is_replaced(self) -> None:
        assert home_relative("/home/anabel/x", "/home/ana") == "/home/anabel/x"
        assert home_relative("/srv/home/ana/x", "/home/ana") == "/srv/home/ana/x"
        assert home_relative("/x", None) == "/x" and home_relative("/x", "/") == "/x"


def test_truncate_start_keeps_the_end_and_never_splits_a_wide_character() -> None:
    assert truncate_start("streamed words", 20) == "streamed words"
    assert truncate_start("streamed words", 8) == "…d words"
    assert truncate_start("漢字の題名", 6) == "…題名"  # 5 cells: a wide character is never halved
    assert truncate_start("abc", 0) == ""


def test_a_markdown_glimpse_reads_as_plain_text() -> None:
    from sessionref_tui.display import markdown_glimpse

    assert markdown_glimpse("Done: `actions/cache` keyed on **the lock file**") == (
        "Done: actions/cache keyed on the lock file"
    )
    assert markdown_glimpse("## Plan") == "Plan"
    assert markdown_glimpse("- see [the docs](https://example.org/x) first") == "see the docs first"
    assert markdown_glimpse("1. a * b = c") == "a * b = c"
