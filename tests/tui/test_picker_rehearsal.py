"""The `@` picker is rehearsed once, unseen, after the first session is drawn (`rehearse_picker`).

The rehearsal lays the picker out and draws it so that the first `@` costs what later ones do;
no frame drawn while it lasts reaches the terminal, and nothing the user sees or types changes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from app_factory import build_harness
from sessionref_tui.textual_compat import DISPLAY_METHOD
from sessionref_tui.widgets.composer import Composer
from sessionref_tui.widgets.mention_popup import MentionPopup
from textual.app import App
from worker_wait import workers_done


@pytest.fixture
def written_frames(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """For every frame an app hands to the terminal: whether the picker was displayed in it."""
    frames: list[bool] = []
    real_display = getattr(App, DISPLAY_METHOD)

    def display(self: App[Any], screen: Any, renderable: Any) -> None:
        if renderable is not None:
            popups = self.query(MentionPopup)
            frames.append(bool(popups) and popups.first().display)
        real_display(self, screen, renderable)

    monkeypatch.setattr(App, DISPLAY_METHOD, display)
    return frames


async def test_the_picker_is_laid_out_unseen_then_closed(tmp_path: Path, written_frames: list[bool]) -> None:
    harness = build_harness(tmp_path)
    assert harness.app.chat.rehearse_picker, "on by default"
    rehearsed: list[int] = []
    sizes_at_end: list[int] = []
    real_rehearse, real_end = MentionPopup.rehearse, MentionPopup.end_rehearsal

    def rehearse(popup: MentionPopup, candidates: Any) -> None:
        rehearsed.append(len(candidates))
        real_rehearse(popup, candidates)

    def end_rehearsal(popup: MentionPopup) -> None:
        sizes_at_end.append(popup.candidate_list.size.height)
        real_end(popup)

    async with harness.app.run_test(size=(120, 36)) as pilot:
        popup = pilot.app.query_one(MentionPopup)
        popup.rehearse = rehearse.__get__(popup)  # type: ignore[method-assign]
        popup.end_rehearsal = end_rehearsal.__get__(popup)  # type: ignore[method-assign]
        await workers_done(pilot.app)
        await pilot.pause()
        while popup.display:  # the rehearsal ends with the frame that laid the picker out
            await pilot.pause()
        assert rehearsed and rehearsed[0] > 0
        assert sizes_at_end and sizes_at_end[0] > 0, "the picker's rows were laid out"
        assert written_frames and not any(written_frames), "no frame with the picker reached the terminal"
        assert not popup.is_open and popup.candidates == () and popup.query_text == ""
        assert pilot.app.query_one(Composer).value == ""

        await pilot.press("@")
        await workers_done(pilot.app)
        await pilot.pause()
        assert popup.is_open and len(popup.candidates) == rehearsed[0]
        assert written_frames[-1], "the picker the user opened is drawn"


async def test_while_rehearsed_the_picker_takes_no_keys_and_no_clicks(tmp_path: Path) -> None:
    harness = build_harness(tmp_path)
    async with harness.app.run_test(size=(120, 36)) as pilot:
        await workers_done(pilot.app)
        await pilot.pause()
        composer = pilot.app.query_one(Composer)
        popup = composer.popup
        candidates = await harness.workspace.candidates(pilot.app.chat.agent, "", 5)
        popup.rehearse(candidates)
        await pilot.pause()
        assert popup.display and popup.size.height > 0 and not popup.is_open
        await pilot.press("h", "i", "down", "tab")
        assert composer.value == "hi", "keys went to the draft, not to the rehearsed rows"
        await pilot.click("#mention-options")
        await pilot.pause()
        assert composer.value == "hi", "a click on a rehearsed row picks nothing"
        popup.end_rehearsal()
        assert not popup.display and popup.candidates == ()
