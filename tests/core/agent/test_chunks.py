"""Batched chunk logging."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from sessionref.agent.chunks import ChunkBatcher


async def test_batch_is_written_when_full_and_on_flush() -> None:
    batches: list[list[str]] = []

    def write(events: Any) -> None:
        batches.append([event["data"]["chunk"]["text"] for event in events])

    batcher = ChunkBatcher(write, turn=2, step=3, max_batch=3, max_delay=3600)
    for delta in "abcde":
        batcher.add(delta)
    assert batches == [["a", "b", "c"]]
    batcher.flush()
    assert batches == [["a", "b", "c"], ["d", "e"]]
    batcher.flush()
    assert len(batches) == 2


async def test_paused_stream_is_written_by_the_timer() -> None:
    written = asyncio.Event()
    events_seen: list[Any] = []

    def write(events: Any) -> None:
        events_seen.extend(events)
        written.set()

    batcher = ChunkBatcher(write, turn=1, step=1, max_batch=100, max_delay=0.001)
    batcher.add("only")
    await written.wait()
    assert events_seen == [
        {
            "type": "assistant/chunk",
            "data": {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "text": "only"}},
        }
    ]


async def test_failed_write_keeps_the_batch_for_the_final_flush() -> None:
    attempts: list[int] = []

    def write(events: Any) -> None:
        attempts.append(len(events))
        if len(attempts) == 1:
            raise OSError("disk full")

    batcher = ChunkBatcher(write, turn=1, step=1, max_batch=2, max_delay=3600)
    batcher.add("a")
    with pytest.raises(OSError):
        batcher.add("b")
    batcher.add("c")
    assert attempts == [2, 3]
    assert batcher.take_pending() == []
