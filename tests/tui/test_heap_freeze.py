"""Once the workspace is shown, the start-up heap is frozen so full collections do not stall typing."""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path

from app_factory import build_harness

GUARD_SECONDS = 10
"""Only a guard against a hang: the event is set on the frame after the first session is shown."""


async def test_the_heap_is_frozen_once_the_first_session_is_on_screen(tmp_path: Path) -> None:
    gc.unfreeze()
    assert gc.get_freeze_count() == 0
    harness = build_harness(tmp_path)
    async with harness.app.run_test(size=(120, 36)) as pilot:
        await asyncio.wait_for(pilot.app.heap_frozen.wait(), GUARD_SECONDS)
        assert pilot.app.chat.ready_event.is_set()
        assert gc.get_freeze_count() > 0
    gc.unfreeze()
