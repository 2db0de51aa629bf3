"""Pilot tests for the composer: `@` trigger, lookups, keys, chips, clipboard and submit support."""

from __future__ import annotations

import pytest
from composer_harness import (
    SESSIONS,
    ComposerHarness,
    FakeSource,
    ManualSleep,
    rendered,
    settle,
    type_text,
)
from sessionref.contract.errors import CodedError
from sessionref.contract.uri import SessionReference, format_session_reference_mention
from sessionref_tui.lookup import LOADING_DELAY, LOOKUP_DEBOUNCE
from sessionref_tui.mentions import CHIP_SPACE, mention_for
from textual import events
from textual.widgets.text_area import Selection

ABC = "@[abc](dsh-session:ImFiYyI)"


def mention(session_id: str, label: str | None = None) -> str:
    return format_session_reference_mention(SessionReference(session_id, label))


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

    async def test_a_bare_at_with_nothing_to_mention_says_there_are_no_sessions_yet(self) -> None:
        app = ComposerHarness(FakeSource([]))
        async with app.run_test(size=(100, 24)) as pilot:
            await type_text(pilot, "@")
            await settle(pilot)
            status = app.composer.popup.query_one("#mention-status")
            assert app.composer.popup.is_open
            assert rendered(status)[0].startswith(
                "No other sessions yet — one is listed here once its first message is sent."
            )
            await type_text(pilot, "x")
            await settle(pilot)
            assert rendered(status)[0].startswith("no matching sessions")


class TestLookup:
    async def test_debounce_asks_the_source_once_for_a_quickly_typed_word(self) -> None:
        sleep = ManualSleep()
        sleep.hold(LOOKUP_DEBOUNCE)
        app = ComposerHarness(sleep=sleep)
        async with app.run_test() as pilot:
            await type_text(pilot, "@res")
            await sleep.wait_until_waiting(LOOKUP_DEBOUNCE)
            await pilot.pause()
            assert app.source.queries == []
            sleep.release(LOOKUP_DEBOUNCE)
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
        source.fail_with = CodedError("STORE_UNREADABLE", "index is locked")
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
            options = app.composer.popup.candidate_list
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
            assert app.composer.display_text == f"ask @Deploy{CHIP_SPACE}checklist "
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

    async def test_escape_keeps_the_picker_closed_while_typing_on_in_the_same_word(self) -> None:
        app = ComposerHarness()
        async with app.run_test() as pilot:
            await type_text(pilot, "@re")
            await settle(pilot)
            await pilot.press("escape")
            await settle(pilot)
            assert not app.composer.popup.is_open
            asked = list(app.source.queries)
            await pilot.press("left", "right", "end")
            await type_text(pilot, "search")
            await pilot.press("backspace")
            await settle(pilot)
            assert app.composer.display_text == "@researc"
            assert not app.composer.popup.is_open
            assert app.source.queries == asked

    async def test_escape_while_the_lookup_is_pending_keeps_it_from_opening(self) -> None:
        sleep = ManualSleep()
        sleep.hold(LOOKUP_DEBOUNCE)
        app = ComposerHarness(sleep=sleep)
        async with app.run_test() as pilot:
            await type_text(pilot, "@re")
            await sleep.wait_until_waiting(LOOKUP_DEBOUNCE)
            await pilot.press("escape")
            sleep.release(LOOKUP_DEBOUNCE)
            await settle(pilot)
            assert not app.composer.popup.is_open
            assert app.source.queries == []

    async def test_leaving_the_dismissed_word_and_coming_back_asks_again(self) -> None:
        app = ComposerHarness()
        async with app.run_test() as pilot:
            await type_text(pilot, "x @re")
            await settle(pilot)
            await pilot.press("escape", "space")
            await settle(pilot)
            assert not app.composer.popup.is_open
            asked = list(app.source.queries)
            await pilot.press("backspace")
            await settle(pilot)
            assert app.composer.popup.is_open
            assert app.source.queries == [*asked, "re"]

    async def test_a_dismissed_word_whose_at_is_retyped_opens_the_picker(self) -> None:
        app = ComposerHarness()
        async with app.run_test() as pilot:
            await type_text(pilot, "x @")
            await settle(pilot)
            await pilot.press("escape", "backspace")
            await settle(pilot)
            await type_text(pilot, "@")
            await settle(pilot)
            assert app.composer.popup.is_open
            assert app.source.queries == ["", ""]

    async def test_escape_outside_an_at_word_is_left_to_the_app(self) -> None:
        app = ComposerHarness()
        async with app.run_test() as pilot:
            await type_text(pilot, "plain")
            assert app.composer._handle_key("escape") is False

    async def test_tab_reopens_a_dismissed_picker(self) -> None:
        app = ComposerHarness()
        async with app.run_test() as pilot:
            await type_text(pilot, "@re")
            await settle(pilot)
            await pilot.press("escape")
            await settle(pilot)
            assert not app.composer.popup.is_open
            await pilot.press("tab")
            await settle(pilot)
            assert app.composer.popup.is_open
            assert app.composer.input.has_focus
            await type_text(pilot, "s")  # asked again: typing on follows the word as usual
            await settle(pilot)
            assert app.composer.popup.is_open and app.composer.popup.query_text == "res"

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
            # Still drawn as it was; the value (what is sent) has its spaces back.
            assert app.composer.display_text == f"hi @Research{CHIP_SPACE}notXes "
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

    async def test_a_draft_put_back_ending_in_an_at_word_does_not_open_the_picker(self) -> None:
        app = ComposerHarness()
        async with app.run_test() as pilot:
            app.composer.value = "ask @re"  # a returned draft, or one whose send failed
            await settle(pilot)
            await type_text(pilot, "s")  # typing on in that word keeps it closed, as after a paste
            await settle(pilot)
            assert not app.composer.popup.is_open
            assert app.source.queries == []
            await pilot.press("tab")  # …until the user asks for it
            await settle(pilot)
            assert app.composer.popup.is_open
            assert app.source.queries == ["res"]

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

    async def test_error_shown_right_after_restoring_the_draft_stays(self) -> None:
        app = ComposerHarness()
        async with app.run_test() as pilot:
            app.composer.value = "restored draft"
            app.composer.show_error("Invalid session reference")
            await pilot.pause()
            assert app.composer.query_one("#composer-notice").has_class("-error")

    async def test_clear_if_unchanged(self) -> None:
        app = ComposerHarness()
        async with app.run_test() as pilot:
            await type_text(pilot, "hello")
            assert not app.composer.clear_if_unchanged("other")
            assert app.composer.value == "hello"
            assert app.composer.clear_if_unchanged("hello")
            await pilot.pause()
            assert app.composer.value == ""
