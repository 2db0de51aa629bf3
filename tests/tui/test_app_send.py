"""Sending from the app: idle and running delivery order in the inspector; failures keep the draft."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from app_factory import GatedModel, Harness, build_harness, session_id_for
from sessionref.contract.uri import SessionReference, format_session_reference_mention
from sessionref_tui.widgets.composer import Composer
from sessionref_tui.widgets.inspector import Inspector
from sessionref_tui.widgets.transcript import SnapshotView, TurnNote, UserMessageView
from textual.pilot import Pilot
from textual.widgets import Static
from worker_wait import workers_done

SIZE = (160, 45)
RETRY_TITLE = "Fix flaky retry test in payments"


def mention(name: str, label: str | None = None) -> str:
    return format_session_reference_mention(SessionReference(session_id_for(name), label or name))


async def settle(pilot: Pilot[Any]) -> None:
    await workers_done(pilot.app)
    await pilot.pause()


async def pick_mention(pilot: Pilot[Any], query: str) -> None:
    """Type `@query`, wait for the lookup, accept the highlighted candidate with Tab."""
    await pilot.press("@", *query)
    await settle(pilot)
    await pilot.press("tab")
    await pilot.pause()


async def send(pilot: Pilot[Any], text: str) -> None:
    await pilot.press(*text)
    await pilot.press("enter")
    await settle(pilot)


def user_message_order(harness: Harness) -> list[tuple[int, str]]:
    """(turn, source kind) of every user/message in the current log, in log order."""
    turn = 0
    order: list[tuple[int, str]] = []
    for event in harness.events():
        if event["type"] == "turn/start":
            turn = event["data"]["turn"]
        if event["type"] == "user/message":
            order.append((turn, event["data"]["source"]["kind"]))
    return order


def inspector_user_rows(pilot: Pilot[Any]) -> list[str]:
    return [source for kind, source in pilot.app.query_one(Inspector).order() if kind == "user/message"]


def notice_text(pilot: Pilot[Any]) -> str:
    return str(pilot.app.query_one("#composer-notice", Static).render())


async def test_idle_send_shows_snapshot_right_before_the_prompt(tmp_path: Path) -> None:
    harness = build_harness(tmp_path, show_inspector=True)
    async with harness.app.run_test(size=SIZE) as pilot:
        await pick_mention(pilot, "flaky")
        await send(pilot, "what was the fix?")
        await pilot.app.chat.agent.wait_idle()
        await pilot.pause()
        assert inspector_user_rows(pilot) == ["session-reference", "user"]
        assert user_message_order(harness) == [(1, "session-reference"), (1, "user")]
        assert pilot.app.query_one(Composer).value == ""
        snapshot = pilot.app.query_one(SnapshotView)
        assert str(snapshot.title) == f"Referenced sessions · {RETRY_TITLE}"
        prompt = pilot.app.query_one(UserMessageView)
        assert prompt.text == f"@{RETRY_TITLE} what was the fix?"
        assert RETRY_TITLE in prompt.labels


async def test_running_send_gives_the_same_order(tmp_path: Path) -> None:
    model = GatedModel()
    harness = build_harness(tmp_path, model=model, show_inspector=True)
    async with harness.app.run_test(size=SIZE) as pilot:
        await send(pilot, "first question")
        await model.started.wait()
        assert pilot.app.chat.agent.status == "running"
        await pick_mention(pilot, "flaky")
        await send(pilot, "and this one?")
        model.release.set()
        await pilot.app.chat.agent.wait_idle()
        await pilot.pause()
        assert inspector_user_rows(pilot) == ["user", "session-reference", "user"]
        # Steered into the running turn: snapshot and prompt claimed together, snapshot first.
        assert user_message_order(harness) == [(1, "user"), (1, "session-reference"), (1, "user")]
        assert pilot.app.query_one(Composer).value == ""


async def assert_draft_kept(pilot: Pilot[Any], draft: str, code: str) -> None:
    composer = pilot.app.query_one(Composer)
    composer.value = draft
    await pilot.press("enter")
    await settle(pilot)
    assert composer.value == draft
    assert code in notice_text(pilot)
    assert not [event for event in pilot.app.query_one(Inspector).order() if event[0] == "user/message"]


async def test_a_bug_while_preparing_keeps_the_draft_and_names_the_log(tmp_path: Path) -> None:
    harness = build_harness(tmp_path, show_inspector=True)

    async def injected_bug(*_args: object, **_kwargs: object) -> object:
        raise ZeroDivisionError("injected bug")

    harness.workspace.references.prepare_text = injected_bug  # type: ignore[method-assign]
    async with harness.app.run_test(size=SIZE) as pilot:
        await assert_draft_kept(pilot, "hello there", "INTERNAL_ERROR")
        log = harness.workspace.error_log.path
        assert "unexpected ZeroDivisionError: injected bug" in notice_text(pilot)
        assert "ZeroDivisionError: injected bug" in log.read_text(encoding="utf-8")


async def test_self_reference_keeps_the_draft(tmp_path: Path) -> None:
    harness = build_harness(tmp_path, show_inspector=True)
    async with harness.app.run_test(size=SIZE) as pilot:
        own = format_session_reference_mention(SessionReference(harness.current_id, "me"))
        await assert_draft_kept(pilot, f"{own} hello", "SESSION_REFERENCE_SELF_REFERENCE")
        assert "cannot mention itself" in notice_text(pilot)


async def test_too_many_mentions_keep_the_draft(tmp_path: Path) -> None:
    harness = build_harness(tmp_path, show_inspector=True)
    async with harness.app.run_test(size=SIZE) as pilot:
        draft = " ".join(mention(name) for name in ("retry", "index", "release", "trip")) + " compare"
        await assert_draft_kept(pilot, draft, "SESSION_REFERENCE_TOO_MANY")


async def test_unreadable_source_keeps_the_draft(tmp_path: Path) -> None:
    harness = build_harness(tmp_path, show_inspector=True)
    async with harness.app.run_test(size=SIZE) as pilot:
        harness.store.delete_session(session_id_for("trip"))
        await assert_draft_kept(pilot, f"{mention('trip')} plans?", "SESSION_REFERENCE_READ_FAILED")


async def test_escape_cancels_a_slow_prepare_and_keeps_the_draft(tmp_path: Path) -> None:
    harness = build_harness(tmp_path, show_inspector=True)
    gate = asyncio.Event()
    reading = asyncio.Event()
    original = harness.store.read_surface

    async def slow_read(session_id: str) -> Any:
        reading.set()
        await gate.wait()
        return await original(session_id)

    harness.store.read_surface = slow_read  # type: ignore[method-assign]
    async with harness.app.run_test(size=SIZE) as pilot:
        composer = pilot.app.query_one(Composer)
        draft = f"{mention('retry')} summarise please"
        composer.value = draft
        await pilot.press("enter")
        await reading.wait()
        await pilot.pause()
        assert composer.busy
        assert "Preparing references" in notice_text(pilot)
        await pilot.press("escape")
        await settle(pilot)
        gate.set()
        assert composer.value == draft
        assert "SESSION_REFERENCE_CANCELLED" in notice_text(pilot)
        assert not composer.busy
        # Nothing was sent, so the new session on screen was not even created.
        assert pilot.app.chat.is_draft
        assert harness.current_id not in {record.id for record in await harness.store.list_sessions()}


async def test_escape_stops_a_running_reply_and_the_footer_follows(tmp_path: Path) -> None:
    model = GatedModel()
    harness = build_harness(tmp_path, model=model)
    async with harness.app.run_test(size=SIZE) as pilot:
        assert not pilot.app.chat.check_action("stop_turn", ())
        await send(pilot, "tell me a long story")
        await model.started.wait()
        await pilot.pause()
        assert pilot.app.chat.check_action("stop_turn", ())
        await pilot.press("escape")
        await settle(pilot)
        await pilot.app.chat.agent.wait_idle()
        await pilot.pause()
        ends = [event["data"]["reason"] for event in harness.events() if event["type"] == "turn/end"]
        assert ends == ["cancelled"]
        notes = [str(note.render()) for note in pilot.app.query(TurnNote)]
        assert any("Turn cancelled" in note for note in notes)
        assert not pilot.app.chat.check_action("stop_turn", ())


async def test_a_budget_that_cannot_fit_keeps_the_draft(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("[references]\nmaxReferenceBytes = 16\n", encoding="utf-8")
    harness = build_harness(tmp_path, show_inspector=True)
    async with harness.app.run_test(size=SIZE) as pilot:
        await assert_draft_kept(pilot, f"{mention('retry')} summarise", "SESSION_REFERENCE_BUDGET_EXCEEDED")
