"""Editing keys in the composer: keys in one burst keep their order, and no key splits a chip."""

from __future__ import annotations

from composer_harness import SESSIONS, ComposerHarness, settle
from sessionref_tui.mentions import mention_for
from textual import events

CHIPS = " ".join(mention_for(session) for session in SESSIONS)
"""Four chips: wider than a 40-column composer, so the draft wraps across screen lines."""


def burst(app: ComposerHarness, *keys: str) -> None:
    """Post `keys` to the app in one go, as the driver does for one read of the terminal."""
    for key in keys:
        character = key if len(key) == 1 else None
        app.post_message(events.Key(key, character))


class TestBursts:
    async def test_ctrl_u_in_a_burst_applies_between_the_characters_around_it(self) -> None:
        app = ComposerHarness()
        async with app.run_test() as pilot:
            burst(app, "h", "e", "l", "l", "o", "ctrl+u", "X")
            await settle(pilot)
            assert app.composer.value == "X"

    async def test_backspace_and_arrows_in_a_burst_keep_their_place(self) -> None:
        app = ComposerHarness()
        async with app.run_test() as pilot:
            burst(app, "a", "b", "c", "backspace", "d", "left", "left", "X")
            await settle(pilot)
            assert app.composer.value == "aXbd"


class TestLogicalLines:
    async def test_ctrl_u_clears_a_wrapped_line_of_chips_whole(self) -> None:
        app = ComposerHarness()
        async with app.run_test(size=(40, 24)) as pilot:
            app.composer.value = f"first line\n{CHIPS} and more"
            await settle(pilot)
            composer_input = app.composer.input
            assert composer_input.wrapped_document.height > 2  # the second line wraps
            await pilot.press("ctrl+u")
            await settle(pilot)
            assert app.composer.value == "first line\n"

    async def test_ctrl_u_after_a_chip_never_leaves_half_of_it(self) -> None:
        app = ComposerHarness()
        async with app.run_test(size=(40, 24)) as pilot:
            app.composer.value = CHIPS
            await settle(pilot)
            composer_input = app.composer.input
            composer_input.move_cursor(composer_input.location_of(len("@Research notes @Dep")))
            await pilot.press("ctrl+u")
            await settle(pilot)
            remaining = app.composer.value
            assert remaining.startswith(" " + mention_for(SESSIONS[2]))
            assert "Deploy" not in app.composer.display_text

    async def test_ctrl_w_takes_a_chip_whole(self) -> None:
        app = ComposerHarness()
        async with app.run_test() as pilot:
            app.composer.value = f"see {mention_for(SESSIONS[0])}"
            await settle(pilot)
            await pilot.press("ctrl+w")
            await settle(pilot)
            assert app.composer.value == "see "

    async def test_ctrl_k_clears_to_the_end_of_the_logical_line(self) -> None:
        app = ComposerHarness()
        async with app.run_test(size=(40, 24)) as pilot:
            app.composer.value = f"{CHIPS}\nlast"
            await settle(pilot)
            app.composer.input.move_cursor((0, 0))
            await pilot.press("ctrl+k")
            await settle(pilot)
            assert app.composer.value == "\nlast"


class TestWrapping:
    async def test_a_wrapped_draft_never_breaks_a_line_inside_a_chip(self) -> None:
        app = ComposerHarness()
        async with app.run_test(size=(40, 24)) as pilot:
            app.composer.value = f"see {CHIPS} and {CHIPS}"
            await settle(pilot)
            composer_input = app.composer.input
            breaks = composer_input.wrapped_document.get_offsets(0)
            chips = composer_input.chips.chips
            assert len(breaks) >= 3 and len(chips) == 8  # it wraps, around chips of several words
            inside = [offset for offset in breaks for chip in chips if chip.start < offset < chip.end]
            assert inside == []
            assert app.composer.value == f"see {CHIPS} and {CHIPS}"  # sent with the labels' spaces


class TestClearDraft:
    async def test_clear_draft_empties_the_composer_and_undo_brings_the_chips_back(self) -> None:
        app = ComposerHarness()
        async with app.run_test(size=(40, 24)) as pilot:
            app.composer.value = f"first\n{CHIPS}"
            await settle(pilot)
            app.composer.input.clear_draft()
            await settle(pilot)
            assert app.composer.value == ""
            await pilot.press("ctrl+z")
            await settle(pilot)
            assert app.composer.value == f"first\n{CHIPS}"
            assert len(app.composer.input.chips.chips) == len(SESSIONS)
