"""Messages sent while a reply runs: shown as queued, taken by the next step, or handed back on Esc."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app_factory import GatedModel, Harness, build_harness, session_id_for
from sessionref.contract.uri import SessionReference, format_session_reference_mention
from sessionref_tui.widgets.composer import Composer
from sessionref_tui.widgets.queued import QueuedMessages
from sessionref_tui.widgets.transcript import UserMessageView
from textual.pilot import Pilot
from worker_wait import workers_done

SIZE = (150, 45)
RETRY_TITLE = "Fix flaky retry test in payments"


async def settle(pilot: Pilot[Any]) -> None:
    await workers_done(pilot.app)
    await pilot.pause()


async def send(pilot: Pilot[Any], text: str) -> None:
    await pilot.press(*text, "enter")
    await settle(pilot)


async def start_reply_and_queue(pilot: Pilot[Any], model: GatedModel) -> None:
    """Send a message, wait until the model replies, then send one that mentions the retry session."""
    await send(pilot, "first question")
    await model.started.wait()
    await pilot.press("@", *"flaky")
    await settle(pilot)
    await pilot.press("tab")
    await send(pilot, "and this one?")


def queued_texts(pilot: Pilot[Any]) -> list[str]:
    return [message.text for message in pilot.app.query_one(QueuedMessages).messages]


def notices(pilot: Pilot[Any]) -> list[str]:
    return [notification.message for notification in pilot.app._notifications]


def user_messages_in_log(harness: Harness) -> list[str]:
    return [event["data"]["source"]["kind"] for event in harness.events() if event["type"] == "user/message"]


async def test_a_message_sent_while_replying_is_shown_queued_with_its_chip(tmp_path: Path) -> None:
    model = GatedModel()
    harness = build_harness(tmp_path, model=model)
    async with harness.app.run_test(size=SIZE) as pilot:
        await start_reply_and_queue(pilot, model)
        pane = pilot.app.query_one(QueuedMessages)
        assert pane.display
        assert queued_texts(pilot) == [f"@{RETRY_TITLE} and this one?"]
        assert pane.messages[0].references == (RETRY_TITLE,)
        assert pilot.app.query_one(Composer).value == ""
        # Not in the log yet: only the first prompt was taken by the running step.
        assert user_messages_in_log(harness) == ["user"]
        model.release.set()
        await pilot.app.chat.agent.wait_idle()
        await settle(pilot)


async def test_the_next_step_turns_queued_rows_into_normal_messages(tmp_path: Path) -> None:
    model = GatedModel()
    harness = build_harness(tmp_path, model=model)
    async with harness.app.run_test(size=SIZE) as pilot:
        await start_reply_and_queue(pilot, model)
        model.release.set()
        await pilot.app.chat.agent.wait_idle()
        await settle(pilot)
        assert queued_texts(pilot) == []
        assert not pilot.app.query_one(QueuedMessages).display
        prompts = [view.text for view in pilot.app.query(UserMessageView)]
        assert prompts == ["first question", f"@{RETRY_TITLE} and this one?"]


async def test_escape_stops_the_reply_and_puts_queued_messages_back_in_the_composer(tmp_path: Path) -> None:
    model = GatedModel()
    harness = build_harness(tmp_path, model=model)
    async with harness.app.run_test(size=SIZE) as pilot:
        await start_reply_and_queue(pilot, model)
        await send(pilot, "third")
        await pilot.press(*"still typing")
        await pilot.press("escape")
        await settle(pilot)
        await pilot.app.chat.agent.wait_idle()
        await settle(pilot)
        mention = format_session_reference_mention(SessionReference(session_id_for("retry"), RETRY_TITLE))
        assert pilot.app.query_one(Composer).value == f"{mention} and this one?\n\nthird\n\nstill typing"
        assert queued_texts(pilot) == []
        assert "2 queued messages are back in the composer." in notices(pilot)
        # Neither the returned messages nor the snapshot of the first one reached the log.
        assert user_messages_in_log(harness) == ["user"]
        ends = [event["data"]["reason"] for event in harness.events() if event["type"] == "turn/end"]
        assert ends == ["cancelled"]


async def test_drafts_of_a_session_not_on_screen_wait_until_it_is_opened(tmp_path: Path) -> None:
    model = GatedModel()
    harness = build_harness(tmp_path, model=model)
    async with harness.app.run_test(size=SIZE) as pilot:
        await send(pilot, "first question")
        await model.started.wait()
        await send(pilot, "a follow-up")
        replying = pilot.app.chat.agent
        assert queued_texts(pilot) == ["a follow-up"]
        pilot.app.chat.open_session(session_id_for("retry"))
        await settle(pilot)
        assert queued_texts(pilot) == []
        await pilot.press(*"typed here")
        await harness.workspace.stop(replying)  # as when that turn ends without taking the message
        await settle(pilot)
        composer = pilot.app.query_one(Composer)
        assert composer.value == "typed here"
        assert any("kept as that session's draft" in notice for notice in notices(pilot))
        pilot.app.chat.open_session(replying.id)
        await settle(pilot)
        # What was typed in the other session stays with it (issue 21: drafts belong to their session).
        assert composer.value == "a follow-up"
        assert "1 unsent message is back in the composer." in notices(pilot)
        pilot.app.chat.open_session(session_id_for("retry"))
        await settle(pilot)
        assert composer.value == "typed here"
