"""The transcript follows the conversation; scrolled up, it says new output is below; sending jumps there.

And each session keeps its own draft: what is typed in one composer stays with that session."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app_factory import GatedModel, build_harness, session_id_for
from sessionref_tui.mentions import MentionTarget, mention_for
from sessionref_tui.widgets.composer import Composer
from sessionref_tui.widgets.transcript import NewBelowCue, Transcript, UserMessageView
from textual.pilot import Pilot
from worker_wait import workers_done

SIZE = (80, 24)


async def settle(pilot: Pilot[Any]) -> None:
    await workers_done(pilot.app)
    await pilot.pause()


async def scroll_up(pilot: Pilot[Any], lines: int = 9) -> Transcript:
    """Scroll the transcript up as three wheel notches do."""
    transcript = pilot.app.query_one(Transcript)
    await pilot.pause()
    assert transcript.max_scroll_y > lines, "the session must be longer than the screen"
    transcript.scroll_relative(y=-lines, animate=False)
    await pilot.pause()
    assert transcript.scroll_y < transcript.max_scroll_y
    return transcript


async def test_sending_while_scrolled_up_brings_the_message_and_reply_into_view(tmp_path: Path) -> None:
    harness = build_harness(tmp_path, open_session="incident")
    async with harness.app.run_test(size=SIZE) as pilot:
        transcript = await scroll_up(pilot)
        await pilot.press(*"status?", "enter")
        await settle(pilot)
        await pilot.app.chat.agent.wait_idle()
        await settle(pilot)
        assert transcript.following
        assert transcript.scroll_y == transcript.max_scroll_y
        prompt = list(transcript.query(UserMessageView))[-1]
        assert prompt.text == "status?"
        last_row = transcript.children[-1]
        assert transcript.region.overlaps(last_row.region), "the reply must be on screen"
        assert not pilot.app.query_one(NewBelowCue).display


async def test_output_arriving_while_scrolled_up_shows_the_cue_until_scrolled_down(tmp_path: Path) -> None:
    model = GatedModel()
    harness = build_harness(tmp_path, open_session="incident", model=model)
    async with harness.app.run_test(size=SIZE) as pilot:
        await pilot.press(*"status?", "enter")
        await model.started.wait()
        await pilot.pause()
        transcript = await scroll_up(pilot)
        cue = pilot.app.query_one(NewBelowCue)
        assert not cue.display
        position = transcript.scroll_y
        model.release.set()
        await pilot.app.chat.agent.wait_idle()
        await settle(pilot)
        assert cue.display, "new output below the view must be announced"
        assert transcript.scroll_y == position, "new output must not move a view the user scrolled"
        await pilot.click(NewBelowCue)
        await settle(pilot)
        assert transcript.scroll_y == transcript.max_scroll_y
        assert not cue.display


async def test_a_draft_stays_with_its_session(tmp_path: Path) -> None:
    harness = build_harness(tmp_path, open_session="retry")
    async with harness.app.run_test(size=SIZE) as pilot:
        chat = pilot.app.chat
        composer = pilot.app.query_one(Composer)
        chip = mention_for(MentionTarget(session_id_for("index"), "Design: session search index"))
        composer.value = f"ask {chip} about it"
        chat.open_session(session_id_for("release"))
        await settle(pilot)
        assert composer.value == "", "another session's draft must not follow the user"
        await pilot.press(*"other")
        chat.open_session(session_id_for("retry"))
        await settle(pilot)
        assert composer.value == f"ask {chip} about it", "the draft, chips included, is back"
        assert len(composer.input.chips.chips) == 1
        chat.open_session(session_id_for("release"))
        await settle(pilot)
        assert composer.value == "other"


async def test_a_new_sessions_draft_does_not_follow_into_another_session(tmp_path: Path) -> None:
    harness = build_harness(tmp_path)
    async with harness.app.run_test(size=SIZE) as pilot:
        chat = pilot.app.chat
        await pilot.press(*"never sent")
        chat.open_session(session_id_for("retry"))
        await settle(pilot)
        composer = pilot.app.query_one(Composer)
        assert composer.value == ""
        await pilot.press("enter")
        await settle(pilot)
        retry_users = [e for e in harness.events(session_id_for("retry")) if e["type"] == "user/message"]
        assert all("never sent" not in str(event) for event in retry_users)


async def test_the_palettes_clear_the_draft_empties_the_composer(tmp_path: Path) -> None:
    harness = build_harness(tmp_path, open_session="retry")
    async with harness.app.run_test(size=SIZE) as pilot:
        chat = pilot.app.chat
        assert not chat.check_action("clear_draft", ())  # nothing to clear: not offered
        await pilot.press(*"start over")
        assert chat.check_action("clear_draft", ())
        await chat.run_action("clear_draft")
        await settle(pilot)
        assert pilot.app.query_one(Composer).value == ""


async def test_the_demo_shows_a_context_row_from_a_plugin(tmp_path: Path) -> None:
    from sessionref_tui.widgets.transcript import ContextView

    harness = build_harness(tmp_path, open_session="migration")
    async with harness.app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        (context,) = pilot.app.query(ContextView).results()
        assert str(context.title).startswith("Context from dsh-runtime-context")
        prompts = [view.text for view in pilot.app.query(UserMessageView)]
        assert not any("Working directory" in text for text in prompts)
