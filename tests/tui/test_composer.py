"""Pilot tests for the composer: the `@` picker, lookups, keys, chips, preview and submit."""

from __future__ import annotations

import pytest
from composer_harness import (
    NOW_MS,
    SESSIONS,
    ComposerHarness,
    FakeCandidate,
    FakePreview,
    FakeSource,
    ManualSleep,
)
from sessionref.uri import SessionReference, format_session_reference_mention
from sessionref_tui.widgets.composer import LOADING_DELAY, SEARCH_DEBOUNCE, mention_for
from sessionref_tui.widgets.mention_popup import MATCH_STYLE, render_candidate_row
from sessionref_tui.widgets.reference_preview import PREVIEW_DEBOUNCE, render_preview
from textual import events
from textual.widget import Widget
from textual.widgets.text_area import Selection

ABC = "@[abc](dsh-session:ImFiYyI)"


def mention(session_id: str, label: str | None = None) -> str:
    return format_session_reference_mention(SessionReference(session_id, label))


def rendered(widget: Widget) -> list[str]:
    """The text of every line the widget currently renders."""
    return [widget.render_line(y).text for y in range(widget.size.height)]


async def settle(pilot) -> None:
    """Let pending messages, workers and the refresh that follows them finish."""
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def type_text(pilot, text: str) -> None:
    await pilot.press(*[{" ": "space", "@": "@"}.get(char, char) for char in text])


class TestTrigger:
    async def test_at_opens_the_picker_with_all_candidates(self) -> None:
        app = ComposerHarness()
        async with app.run_test() as pilot:
            await type_text(pilot, "hi @")
            await settle(pilot)
            popup = app.composer.popup
            assert popup.is_open
            assert app.source.queries == [""]
            assert [c.session_id for c in popup.candidates] == [s.session_id for s in SESSIONS]

    async def test_email_like_text_never_triggers(self) -> None:
        app = ComposerHarness()
        async with app.run_test() as pilot:
            await type_text(pilot, "me@host")
            await settle(pilot)
            assert not app.composer.popup.is_open
            assert app.source.queries == []

    async def test_whitespace_ends_the_token_and_closes_the_picker(self) -> None:
        app = ComposerHarness()
        async with app.run_test() as pilot:
            await type_text(pilot, "@re")
            await settle(pilot)
            assert app.composer.popup.is_open
            await pilot.press("space")
            await settle(pilot)
            assert not app.composer.popup.is_open

    async def test_popup_is_an_overlay_above_the_composer(self) -> None:
        app = ComposerHarness()
        async with app.run_test(size=(80, 24)) as pilot:
            transcript = app.query_one("#transcript")
            before = transcript.region
            await type_text(pilot, "@")
            await settle(pilot)
            popup = app.composer.popup
            assert transcript.region == before
            assert popup.region.bottom <= app.composer.input.region.y
            assert popup.region.height > 0

    async def test_picker_closes_when_the_input_loses_focus(self) -> None:
        app = ComposerHarness()
        async with app.run_test() as pilot:
            await type_text(pilot, "@")
            await settle(pilot)
            assert app.composer.popup.is_open
            app.set_focus(None)
            await settle(pilot)
            assert not app.composer.popup.is_open

    async def test_no_matches_state(self) -> None:
        app = ComposerHarness()
        async with app.run_test() as pilot:
            await type_text(pilot, "@zzz")
            await settle(pilot)
            status = app.composer.popup.query_one("#mention-status")
            assert app.composer.popup.is_open
            assert "no matching sessions" in rendered(status)[0]


class TestLookup:
    async def test_debounce_asks_the_source_once_for_a_quickly_typed_word(self) -> None:
        sleep = ManualSleep()
        sleep.hold(SEARCH_DEBOUNCE)
        app = ComposerHarness(sleep=sleep)
        async with app.run_test() as pilot:
            await type_text(pilot, "@res")
            await sleep.wait_until_waiting(SEARCH_DEBOUNCE)
            await pilot.pause()
            assert app.source.queries == []
            sleep.release(SEARCH_DEBOUNCE)
            await app.source.wait_for_call("res")
            await settle(pilot)
            assert app.source.queries == ["res"]
            assert [c.session_id for c in app.composer.popup.candidates] == ["s-research"]

    async def test_superseded_lookup_is_cancelled_and_aborted(self) -> None:
        source = FakeSource(SESSIONS, hold=True)
        app = ComposerHarness(source)
        async with app.run_test() as pilot:
            await type_text(pilot, "@r")
            first = await source.wait_for_call("r")
            await pilot.press("e")
            second = await source.wait_for_call("re")
            await pilot.pause()
            assert first.signal.aborted
            assert first.cancelled
            assert not second.signal.aborted
            second.release.set()
            await settle(pilot)
            assert app.composer.popup.query_text == "re"

    async def test_previous_list_stays_visible_while_the_next_query_runs(self) -> None:
        source = FakeSource(SESSIONS, hold=True)
        app = ComposerHarness(source)
        async with app.run_test() as pilot:
            await type_text(pilot, "@r")
            (await source.wait_for_call("r")).release.set()
            await settle(pilot)
            shown_for_r = [c.session_id for c in app.composer.popup.candidates]
            assert shown_for_r
            await pilot.press("e", "t")
            pending = await source.wait_for_call("ret")
            await pilot.pause()
            popup = app.composer.popup
            assert popup.is_open
            assert popup.query_text == "r"
            assert [c.session_id for c in popup.candidates] == shown_for_r
            pending.release.set()
            await settle(pilot)
            assert [c.session_id for c in popup.candidates] == ["s-retro"]

    async def test_results_of_an_older_query_are_never_shown(self) -> None:
        source = FakeSource(SESSIONS, hold=True)
        app = ComposerHarness(source)
        async with app.run_test() as pilot:
            await type_text(pilot, "@b")
            old = await source.wait_for_call("b")
            await pilot.press("backspace", "d")
            new = await source.wait_for_call("d")
            new.release.set()
            await settle(pilot)
            old.release.set()
            await settle(pilot)
            popup = app.composer.popup
            assert popup.query_text == "d"
            assert "s-bug" not in [c.session_id for c in popup.candidates]

    async def test_loading_state_appears_only_after_the_delay(self) -> None:
        source = FakeSource(SESSIONS, hold=True)
        sleep = ManualSleep()
        sleep.hold(LOADING_DELAY)
        app = ComposerHarness(source, sleep=sleep)
        async with app.run_test() as pilot:
            await type_text(pilot, "@")
            call = await source.wait_for_call("")
            await sleep.wait_until_waiting(LOADING_DELAY)
            await pilot.pause()
            popup = app.composer.popup
            assert not popup.is_open
            sleep.release(LOADING_DELAY)
            await pilot.pause()
            await pilot.pause()
            assert popup.is_open and popup.has_class("-loading")
            assert "searching" in rendered(popup.query_one("#mention-status"))[0]
            call.release.set()
            await settle(pilot)
            assert not popup.has_class("-loading")
            assert len(popup.candidates) == len(SESSIONS)

    async def test_a_failing_source_shows_a_quiet_row(self) -> None:
        source = FakeSource(SESSIONS)
        source.fail_with = RuntimeError("index is locked")
        app = ComposerHarness(source)
        async with app.run_test() as pilot:
            await type_text(pilot, "@x")
            await settle(pilot)
            popup = app.composer.popup
            assert popup.is_open
            assert "sessions unavailable: index is locked" in rendered(popup.query_one("#mention-status"))[0]
            await pilot.press("enter")
            await settle(pilot)
            assert app.submitted == []
            assert app.composer.value == "@x"


class TestKeys:
    async def test_up_and_down_wrap(self) -> None:
        app = ComposerHarness()
        async with app.run_test() as pilot:
            await type_text(pilot, "@")
            await settle(pilot)
            options = app.composer.popup.option_list
            assert options.highlighted == 0
            await pilot.press("up")
            assert options.highlighted == len(SESSIONS) - 1
            await pilot.press("down")
            assert options.highlighted == 0
            await pilot.press("down", "down")
            assert app.composer.popup.highlighted_candidate.session_id == SESSIONS[2].session_id
            assert rendered(app.composer.popup.query_one("#mention-status"))[0].startswith("3/4")

    async def test_enter_accepts_while_open_and_sends_when_closed(self) -> None:
        app = ComposerHarness()
        async with app.run_test() as pilot:
            await type_text(pilot, "ask @dep")
            await settle(pilot)
            await pilot.press("enter")
            await settle(pilot)
            expected = f"ask {mention_for(SESSIONS[1])} "
            assert app.submitted == []
            assert app.composer.value == expected
            assert app.composer.display_text == "ask @Deploy checklist "
            assert not app.composer.popup.is_open
            await pilot.press("enter")
            await pilot.pause()
            assert app.submitted == [expected]
            assert app.composer.value == expected

    async def test_tab_accepts(self) -> None:
        app = ComposerHarness()
        async with app.run_test() as pilot:
            await type_text(pilot, "@")
            await settle(pilot)
            await pilot.press("down", "tab")
            await settle(pilot)
            assert app.composer.value == f"{mention_for(SESSIONS[1])} "

    async def test_escape_dismisses_and_does_not_reopen_for_the_same_token(self) -> None:
        app = ComposerHarness()
        async with app.run_test() as pilot:
            await type_text(pilot, "@re")
            await settle(pilot)
            await pilot.press("escape")
            await settle(pilot)
            assert not app.composer.popup.is_open
            asked = list(app.source.queries)
            await pilot.press("left", "right", "end")
            await settle(pilot)
            assert not app.composer.popup.is_open
            assert app.source.queries == asked
            await pilot.press("s")
            await settle(pilot)
            assert app.composer.popup.is_open
            assert app.source.queries == [*asked, "res"]

    async def test_mouse_click_accepts(self) -> None:
        app = ComposerHarness()
        async with app.run_test(size=(80, 24)) as pilot:
            await type_text(pilot, "@")
            await settle(pilot)
            await pilot.click("#mention-options", offset=(3, 2))
            await settle(pilot)
            assert app.composer.value == f"{mention_for(SESSIONS[2])} "
            assert app.composer.input.has_focus

    @pytest.mark.parametrize("key", ["shift+enter", "ctrl+j"])
    async def test_newline_keys_insert_a_line_break(self, key: str) -> None:
        app = ComposerHarness()
        async with app.run_test() as pilot:
            await type_text(pilot, "a")
            await pilot.press(key, "b")
            assert app.composer.value == "a\nb"
            assert app.submitted == []

    async def test_blank_draft_is_not_sent(self) -> None:
        app = ComposerHarness()
        async with app.run_test() as pilot:
            await pilot.press("space", "enter")
            await pilot.pause()
            assert app.submitted == []


class TestChips:
    async def accept_research(self, pilot) -> str:
        await type_text(pilot, "hi @res")
        await settle(pilot)
        await pilot.press("tab")
        await settle(pilot)
        return mention_for(SESSIONS[0])

    async def test_backspace_at_chip_end_removes_the_whole_chip(self) -> None:
        app = ComposerHarness()
        async with app.run_test() as pilot:
            token = await self.accept_research(pilot)
            assert app.composer.value == f"hi {token} "
            await pilot.press("backspace")
            assert app.composer.value == f"hi {token}"
            await pilot.press("backspace")
            assert app.composer.value == "hi "
            assert app.composer.display_text == "hi "

    async def test_delete_at_chip_start_removes_the_whole_chip(self) -> None:
        app = ComposerHarness()
        async with app.run_test() as pilot:
            await self.accept_research(pilot)
            await pilot.press("home", "right", "right", "right", "delete")
            assert app.composer.value == "hi  "

    async def test_typing_inside_a_chip_turns_it_into_plain_text(self) -> None:
        app = ComposerHarness()
        async with app.run_test() as pilot:
            await self.accept_research(pilot)
            await pilot.press("left", "left", "left", "X")
            await settle(pilot)
            assert app.composer.display_text == "hi @Research notXes "
            assert app.composer.value == "hi @Research notXes "
            assert not app.composer.popup.is_open

    async def test_undo_restores_a_deleted_chip(self) -> None:
        app = ComposerHarness()
        async with app.run_test() as pilot:
            token = await self.accept_research(pilot)
            await pilot.press("backspace", "backspace")
            assert app.composer.value == "hi "
            await pilot.press("ctrl+z")
            await pilot.pause()
            assert token in app.composer.value

    async def test_paste_of_a_canonical_token_becomes_a_chip_without_opening_the_picker(self) -> None:
        app = ComposerHarness()
        async with app.run_test() as pilot:
            await type_text(pilot, "see ")
            app.post_message(events.Paste(ABC))
            await settle(pilot)
            assert app.composer.display_text == "see @abc"
            assert app.composer.value == f"see {ABC}"
            assert not app.composer.popup.is_open
            assert app.source.queries == []
            await pilot.press("backspace")
            assert app.composer.value == "see "

    async def test_copy_and_cut_carry_canonical_tokens(self) -> None:
        app = ComposerHarness()
        async with app.run_test() as pilot:
            app.composer.value = f"x {ABC} y"
            await pilot.pause()
            field = app.composer.input
            field.selection = Selection((0, 3), (0, 4))
            await pilot.press("ctrl+c")
            assert app.clipboard == ABC
            field.selection = Selection((0, 0), (0, 3))
            await pilot.press("ctrl+x")
            await pilot.pause()
            assert app.clipboard == f"x {ABC}"
            assert app.composer.value == " y"
            await pilot.press("ctrl+v")
            await pilot.pause()
            assert app.composer.value == f"x {ABC} y"
            assert app.composer.display_text == "x @abc y"

    async def test_chip_text_is_styled(self) -> None:
        app = ComposerHarness()
        async with app.run_test() as pilot:
            app.composer.value = f"x {ABC}"
            await pilot.pause()
            line = app.composer.input.get_line(0)
            styled = [(span.start, span.end) for span in line.spans]
            assert (2, 6) in styled

    async def test_setting_value_makes_chips_and_round_trips(self) -> None:
        app = ComposerHarness()
        async with app.run_test() as pilot:
            value = f"{ABC} and {mention('s2', 'Two')} and @[bad](dsh-session:IiJ)"
            app.composer.value = value
            await pilot.pause()
            assert app.composer.display_text == "@abc and @Two and @[bad](dsh-session:IiJ)"
            assert app.composer.value == value

    async def test_fourth_distinct_mention_shows_a_warning(self) -> None:
        app = ComposerHarness()
        async with app.run_test() as pilot:
            notice = app.composer.query_one("#composer-notice")
            app.composer.value = " ".join(mention(f"s{i}") for i in range(3)) + f" {mention('s0')}"
            await pilot.pause()
            assert not notice.has_class("-shown")
            app.composer.value = " ".join(mention(f"s{i}") for i in range(4))
            await pilot.pause()
            assert notice.has_class("-shown") and notice.has_class("-warning")
            assert "at most 3" in " ".join(rendered(notice))


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
            row = rendered(app.composer.popup.option_list)[0]
            assert "\\x1b[31mEvil[bold]x[/bold]\\x07" in row
            assert "evil\\x1b[2J" in row
            assert "/tmp/\\x1b]0;pwn\\x07" in row
            assert "\x1b" not in row and "\x07" not in row
            preview = "\n".join(rendered(app.composer.popup.preview))
            assert "\\x1b[31mEvil[bold]x[/bold]\\x07" in preview
            await pilot.press("tab")
            await settle(pilot)
            assert app.composer.display_text == "@\\x1b[31mEvil[bold]x[/bold]\\x07 "
            assert "\x1b" not in app.composer.display_text
            (reference,) = __import__("sessionref.uri", fromlist=["x"]).parse_session_reference_text(
                app.composer.value
            ).references
            assert reference.session_id == "evil\x1b[2J"

    async def test_error_text_is_inert(self) -> None:
        app = ComposerHarness()
        async with app.run_test() as pilot:
            app.composer.show_error("bad [bold]thing[/bold]\x1b[2J")
            await pilot.pause()
            text = " ".join(rendered(app.composer.query_one("#composer-notice")))
            assert "bad [bold]thing[/bold]\\x1b[2J" in text


class TestSubmitSupport:
    async def test_busy_keeps_the_draft_and_blocks_sending(self) -> None:
        app = ComposerHarness()
        async with app.run_test() as pilot:
            await type_text(pilot, "hello")
            app.composer.set_busy(True, "Preparing references…")
            await pilot.pause()
            await pilot.press("enter")
            await pilot.pause()
            assert app.submitted == []
            assert app.composer.value == "hello"
            assert "Preparing references…" in " ".join(rendered(app.composer.query_one("#composer-notice")))
            app.composer.set_busy(False)
            await pilot.press("enter")
            await pilot.pause()
            assert app.submitted == ["hello"]

    async def test_error_stays_until_the_draft_is_edited(self) -> None:
        app = ComposerHarness()
        async with app.run_test() as pilot:
            await type_text(pilot, "hello")
            app.composer.show_error("Session reference failed: nope")
            await pilot.pause()
            notice = app.composer.query_one("#composer-notice")
            assert notice.has_class("-error")
            assert app.composer.value == "hello"
            await pilot.press("x")
            await pilot.pause()
            assert not notice.has_class("-shown")

    async def test_clear_if_unchanged(self) -> None:
        app = ComposerHarness()
        async with app.run_test() as pilot:
            await type_text(pilot, "hello")
            assert not app.composer.clear_if_unchanged("other")
            assert app.composer.value == "hello"
            assert app.composer.clear_if_unchanged("hello")
            await pilot.pause()
            assert app.composer.value == ""


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
            lines = rendered(app.composer.popup.option_list)
            assert len(lines) == len(SESSIONS)
            assert len(set(lines)) == len(SESSIONS)
            assert lines[0].startswith("Research notes")
            assert all(len(line) <= 60 for line in lines)
