"""Tests for the picker rows and the reference preview: layout, numbers, cancellation, inert data."""

from __future__ import annotations

import random

import pytest
from composer_harness import (
    NOW_MS,
    SESSIONS,
    ComposerHarness,
    FakeCandidate,
    FakePreview,
    FakeSource,
    ManualSleep,
    rendered,
    settle,
    type_text,
)
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from sessionref.contract.errors import CodedError
from sessionref.contract.uri import parse_session_reference_text
from sessionref_tui.display import match_spans
from sessionref_tui.lookup import LOOKUP_DEBOUNCE
from sessionref_tui.widgets.candidate_rows import (
    MATCH_STYLE,
    FieldWidths,
    RowFields,
    columns_for,
    layout_row,
    query_spans,
    render_candidate_row,
    row_pieces,
)
from sessionref_tui.widgets.reference_preview import PREVIEW_DEBOUNCE, render_preview


class TestPreview:
    async def test_preview_shows_the_numbers(self) -> None:
        app = ComposerHarness()
        async with app.run_test(size=(100, 30)) as pilot:
            await type_text(pilot, "@")
            await settle(pilot)
            text = "\n".join(rendered(app.composer.popup.preview))
            assert "Research notes · 100 messages" in text
            assert "sends 30 (18.2 KB) · omits 12 (40.0 KB) · budget 64.0 KB" in text
            assert "How do we ship this?" in text and "Ship it on Friday." in text

    async def test_moving_the_highlight_cancels_the_running_preview(self) -> None:
        source = FakeSource(SESSIONS)
        source.hold_previews = True
        app = ComposerHarness(source)
        async with app.run_test(size=(100, 30)) as pilot:
            await type_text(pilot, "@")
            first = await source.wait_for_call("s-research", previews=True)
            await pilot.press("down")
            second = await source.wait_for_call("s-deploy", previews=True)
            await pilot.pause()
            assert first.signal.aborted and first.cancelled
            second.release.set()
            await settle(pilot)
            text = "\n".join(rendered(app.composer.popup.preview))
            assert "Deploy checklist" in text
            assert "Research notes" not in text

    async def test_a_new_lookup_drops_the_pending_preview_read(self) -> None:
        source = FakeSource(SESSIONS)
        source.hold_previews = True
        sleep = ManualSleep()
        app = ComposerHarness(source, sleep=sleep)
        async with app.run_test(size=(100, 30)) as pilot:
            await type_text(pilot, "@")
            first = await source.wait_for_call("s-research", previews=True)
            sleep.hold(LOOKUP_DEBOUNCE)
            await pilot.press("r")
            await sleep.wait_until_waiting(LOOKUP_DEBOUNCE)
            assert first.signal.aborted and first.cancelled  # while the lookup still waits
            sleep.release(LOOKUP_DEBOUNCE)
            second = await source.wait_for_call("r")
            assert second.finished
            await pilot.pause()
            assert [call.argument for call in source.preview_calls] == ["s-research", "s-research"]

    async def test_preview_debounce_skips_rows_passed_quickly(self) -> None:
        sleep = ManualSleep()
        sleep.hold(PREVIEW_DEBOUNCE)
        app = ComposerHarness(sleep=sleep)
        async with app.run_test(size=(100, 30)) as pilot:
            await type_text(pilot, "@")
            await sleep.wait_until_waiting(PREVIEW_DEBOUNCE)
            await pilot.press("down", "down")
            await pilot.pause()
            sleep.release(PREVIEW_DEBOUNCE)
            await app.source.wait_for_call("s-bug", previews=True)
            await settle(pilot)
            assert [call.argument for call in app.source.preview_calls] == ["s-bug"]


class TestHostileData:
    HOSTILE = FakeCandidate(
        "evil\x1b[2J",
        "\x1b[31mEvil[bold]x[/bold]\x07",
        "/tmp/\x1b]0;pwn\x07",
    )

    async def test_rows_and_chips_render_hostile_fields_inert(self) -> None:
        app = ComposerHarness(FakeSource([self.HOSTILE]))
        async with app.run_test(size=(120, 30)) as pilot:
            await type_text(pilot, "@")
            await settle(pilot)
            row = rendered(app.composer.popup.candidate_list)[0]
            assert "\\x1b[31mEvil[bold]x[/bold]\\x07" in row
            assert "evil\\x1b[2J" in row
            assert "/tmp/\\x1b]0;pwn\\x07" in row
            assert "\x1b" not in row and "\x07" not in row
            preview = "\n".join(rendered(app.composer.popup.preview))
            assert "\\x1b[31mEvil[bold]x[/bold]\\x07" in preview
            await pilot.press("tab")
            await settle(pilot)
            # The inserted label is neutral (issue 20): the escape sequence is gone, not shown escaped.
            assert app.composer.display_text == "@Evil[bold]x[/bold] "
            assert "\x1b" not in app.composer.display_text
            (reference,) = parse_session_reference_text(app.composer.value).references
            assert reference.session_id == "evil\x1b[2J"

    async def test_error_text_is_inert(self) -> None:
        app = ComposerHarness()
        async with app.run_test() as pilot:
            app.composer.show_error("bad [bold]thing[/bold]\x1b[2J")
            await pilot.pause()
            text = " ".join(rendered(app.composer.query_one("#composer-notice")))
            assert "bad [bold]thing[/bold]\\x1b[2J" in text


class TestCandidateRow:
    def test_row_fills_the_width_exactly_with_the_age_at_the_right(self) -> None:
        row = render_candidate_row(SESSIONS[1], "", 56, NOW_MS)
        assert row.cell_len == 56
        assert row.plain.startswith("Deploy checklist  s-deploy")
        assert row.plain.endswith(" 3h")
        assert "/srv/ops" in row.plain

    def test_id_is_shown_only_when_it_differs_from_the_label(self) -> None:
        same = FakeCandidate("plain-id", "plain-id", "/a", NOW_MS, False)
        assert render_candidate_row(same, "", 60, NOW_MS).plain.count("plain-id") == 1

    def test_same_workspace_is_marked_and_missing_cwd_is_said(self) -> None:
        assert "● /work/app" in render_candidate_row(SESSIONS[0], "", 70, NOW_MS).plain
        assert "(no cwd)" in render_candidate_row(SESSIONS[2], "", 70, NOW_MS).plain
        assert "●" not in render_candidate_row(SESSIONS[1], "", 70, NOW_MS).plain

    def test_the_match_is_highlighted(self) -> None:
        row = render_candidate_row(SESSIONS[0], "notes", 70, NOW_MS)
        start = row.plain.index("notes")
        assert any(
            span.start == start and span.end == start + 5 and span.style == MATCH_STYLE for span in row.spans
        )

    def test_long_similar_rows_stay_distinguishable_at_60_columns(self) -> None:
        base = "Quarterly planning for the platform team, draft"
        rows = [
            render_candidate_row(
                FakeCandidate(f"2f0c-{n}-session-{n}", f"{base} {n}", f"/home/dev/projects/{n}-service"),
                "",
                56,
                NOW_MS,
            ).plain
            for n in ("alpha", "beta")
        ]
        assert all(len(row) == 56 for row in rows)
        assert rows[0] != rows[1]
        assert "alpha" in rows[0] and "beta" in rows[1]

    @pytest.mark.parametrize("width", [1, 10, 20, 30])
    def test_tiny_widths_never_overflow(self, width: int) -> None:
        assert render_candidate_row(SESSIONS[0], "re", width, NOW_MS).cell_len <= width


def cells_of(segments: list[Segment]) -> list[tuple[str, Style]]:
    """Each character with the style it is drawn in (no style and the empty style are the same)."""
    return [(char, segment.style or Style()) for segment in segments for char in segment.text]


class TestRowPieces:
    def test_ascii_fast_search_finds_whatquery_spans_finds(self) -> None:
        rng = random.Random(11)
        for _ in range(2000):
            text = "".join(rng.choice("aAbB-/ .") for _ in range(rng.randint(0, 30)))
            query = "".join(rng.choice("aAbB-") for _ in range(rng.randint(0, 3)))
            assert query_spans(text, query) == match_spans(text, query)

    @pytest.mark.parametrize("width", [12, 40, 60, 97])
    def test_pieces_draw_the_same_cells_as_the_text_row(self, width: int) -> None:
        console = Console(width=200)
        rows = [RowFields.of(candidate, NOW_MS) for candidate in SESSIONS]
        columns = columns_for(rows)
        for fields in rows:
            pieces, cells = row_pieces(fields, "re", width, FieldWidths.of(columns, width))
            assert cells == width
            from_pieces = [Segment(text, style) for text, style in pieces]
            from_text = list(layout_row(fields, "re", width, columns).render(console))
            assert cells_of(from_pieces) == cells_of(from_text)


class TestPreviewText:
    def test_numbers_and_lines(self) -> None:
        text = render_preview(FakePreview("s", "ignored", compacted=True, truncated=True), "Label", 80).plain
        lines = text.split("\n")
        assert lines[0] == "Label · 42 messages · compacted"
        assert lines[1] == "sends 30 (18.2 KB) · omits 12 (40.0 KB) · long text cut · budget 64.0 KB"
        assert lines[2] == "first How do we ship this?"
        assert lines[3] == "last  Ship it on Friday."

    def test_nothing_omitted_is_not_mentioned(self) -> None:
        preview = FakePreview("s", "x", omitted_messages=0, omitted_bytes=0, first_line=None, last_line=None)
        expected = "x · 42 messages\nsends 30 (18.2 KB) · budget 64.0 KB"
        assert render_preview(preview, "x", 80).plain == expected

    def test_lines_are_cut_to_the_width(self) -> None:
        preview = FakePreview("s", "x", first_line="word " * 40)
        for line in render_preview(preview, "a long label " * 10, 40).plain.split("\n"):
            assert len(line) <= 40


class TestNarrowTerminal:
    async def test_popup_rows_fit_at_60_columns(self) -> None:
        app = ComposerHarness()
        async with app.run_test(size=(60, 24)) as pilot:
            await type_text(pilot, "@")
            await settle(pilot)
            lines = rendered(app.composer.popup.candidate_list)
            assert len(lines) == len(SESSIONS)
            assert len(set(lines)) == len(SESSIONS)
            assert lines[0].startswith("Research notes")
            assert all(len(line) <= 60 for line in lines)


MANY = tuple(
    FakeCandidate(f"s-{index:02d}", f"Session number {index:02d}", "/work/app", NOW_MS - index * 60_000)
    for index in range(17)
)


class TestScrolling:
    async def test_at_most_eight_rows_show_and_the_list_scrolls_with_a_position(self) -> None:
        app = ComposerHarness(FakeSource(MANY))
        async with app.run_test(size=(80, 30)) as pilot:
            await type_text(pilot, "@")
            await settle(pilot)
            popup = app.composer.popup
            options = popup.candidate_list
            assert options.size.height == 8
            assert rendered(popup.query_one("#mention-status"))[0].startswith("1/17")
            await pilot.press("up")
            await settle(pilot)
            assert rendered(popup.query_one("#mention-status"))[0].startswith("17/17")
            assert options.scroll_y > 0
            assert any("Session number 16" in line for line in rendered(options))


class TestPopupHeight:
    async def test_a_preview_landing_does_not_resize_the_popup(self) -> None:
        source = FakeSource(SESSIONS)
        source.hold_previews = True
        app = ComposerHarness(source)
        async with app.run_test(size=(100, 30)) as pilot:
            await type_text(pilot, "@")
            call = await source.wait_for_call("s-research", previews=True)
            await pilot.pause()
            popup = app.composer.popup
            reading = popup.region
            assert "reading Research notes" in rendered(popup.preview)[0]
            call.release.set()
            await settle(pilot)
            assert "Research notes · 100 messages" in rendered(popup.preview)[0]
            assert popup.region == reading


class TestPreviewFailure:
    async def test_a_failing_preview_is_a_quiet_line(self) -> None:
        class BrokenPreviews(FakeSource):
            async def preview(self, session_id: str, signal: object) -> FakePreview:
                raise CodedError("STORE_UNREADABLE", "log unreadable")

        app = ComposerHarness(BrokenPreviews(SESSIONS))
        async with app.run_test(size=(80, 30)) as pilot:
            await type_text(pilot, "@")
            await settle(pilot)
            text = "\n".join(rendered(app.composer.popup.preview))
            assert "preview unavailable: log unreadable" in text
            assert app.composer.popup.is_open
