"""A turn whose end the log could not record is still shown: a notification with its code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app_factory import build_harness
from sessionref.store import StoreError
from worker_wait import workers_done


async def test_an_unlogged_turn_failure_is_notified_with_its_code(tmp_path: Path) -> None:
    harness = build_harness(tmp_path, open_session="retry")
    original = harness.store.append

    def refuse_after_turn_start(session_id: str, events: Any, **options: Any) -> Any:
        if events[0]["type"] != "turn/start":
            raise StoreError("STORE_LOCK_TIMEOUT", "another sessionref process kept this session locked")
        return original(session_id, events, **options)

    async with harness.app.run_test(size=(120, 36)) as pilot:
        await workers_done(pilot.app)
        harness.store.append = refuse_after_turn_start  # type: ignore[method-assign]
        await pilot.press(*"hello", "enter")
        await workers_done(pilot.app)
        await pilot.app.chat.agent.wait_idle()
        await pilot.pause()
        messages = [notification.message for notification in pilot.app._notifications]
        assert any("STORE_LOCK_TIMEOUT" in message and "could not record" in message for message in messages)
