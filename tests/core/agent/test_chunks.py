"""Batched chunk logging: batches are queued on the writer without waiting, failures surface."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from sessionref.agent.chunks import MAX_BATCHES_IN_FLIGHT, ChunkBatcher


class ManualWriter:
    """Records every queued batch; each write settles only when the test says so."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self.futures: list[asyncio.Future[Any]] = []

    def __call__(self, events: list[dict[str, Any]]) -> asyncio.Future[Any]:
        self.batches.append([event["data"]["chunk"]["text"] for event in events])
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.futures.append(future)
        return future

    def settle_all(self) -> None:
        for future in self.futures:
            if not future.done():
                future.set_result([])


async def test_batch_is_sent_when_full_and_on_send() -> None:
    writer = ManualWriter()
    batcher = ChunkBatcher(writer, turn=2, step=3, max_batch=3, max_delay=3600)
    for delta in "abcde":
        batcher.add(delta)
    assert writer.batches == [["a", "b", "c"]]
    batcher.send()
    assert writer.batches == [["a", "b", "c"], ["d", "e"]]
    batcher.send()
    assert len(writer.batches) == 2
    assert batcher.in_flight == 2  # queued, not waited for
    writer.settle_all()
    await batcher.settle()
    assert batcher.in_flight == 0


async def test_paused_stream_is_sent_by_the_timer() -> None:
    sent = asyncio.Event()
    events_seen: list[Any] = []

    def write(events: Any) -> asyncio.Future[Any]:
        events_seen.extend(events)
        sent.set()
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        future.set_result([])
        return future

    batcher = ChunkBatcher(write, turn=1, step=1, max_batch=100, max_delay=0.001)
    batcher.add("only")
    await sent.wait()
    assert events_seen == [
        {
            "type": "assistant/chunk",
            "data": {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "text": "only"}},
        }
    ]


async def test_keep_up_waits_only_beyond_the_batches_allowed_in_flight() -> None:
    writer = ManualWriter()
    batcher = ChunkBatcher(writer, turn=1, step=1, max_batch=1, max_delay=3600)
    for index in range(MAX_BATCHES_IN_FLIGHT):
        batcher.add(f"d{index}")
        await batcher.keep_up()  # returns at once: the disk may lag this much
    batcher.add("one too many")
    waiting = asyncio.ensure_future(batcher.keep_up())
    await asyncio.sleep(0)
    assert not waiting.done()
    writer.futures[0].set_result([])  # the oldest batch lands: the stream may go on
    await waiting
    assert batcher.in_flight == MAX_BATCHES_IN_FLIGHT


async def test_a_failed_batch_is_reported_once_and_later_batches_still_go_out() -> None:
    writer = ManualWriter()
    batcher = ChunkBatcher(writer, turn=1, step=1, max_batch=1, max_delay=3600)
    batcher.add("a")
    batcher.add("b")
    writer.futures[0].set_exception(OSError("disk full"))
    writer.futures[1].set_result([])
    with pytest.raises(OSError, match="disk full"):
        await batcher.keep_up()
    batcher.add("c")
    assert writer.batches == [["a"], ["b"], ["c"]]  # nothing retried out of order
    writer.settle_all()
    await batcher.settle()  # the failure was reported once


async def test_settle_waits_for_every_batch_and_raises_the_first_failure() -> None:
    writer = ManualWriter()
    batcher = ChunkBatcher(writer, turn=1, step=1, max_batch=1, max_delay=3600)
    for delta in "abc":
        batcher.add(delta)
    settling = asyncio.ensure_future(batcher.settle())
    writer.futures[1].set_exception(OSError("first"))
    writer.futures[2].set_exception(OSError("second"))
    await asyncio.sleep(0)
    assert not settling.done()  # batch "a" has not landed yet
    writer.futures[0].set_result([])
    with pytest.raises(OSError, match="first"):
        await settling
    assert batcher.take_pending() == []


async def test_a_huge_reply_is_logged_as_chunks_only_up_to_the_bound() -> None:
    from sessionref.agent import chunks as chunks_module

    batches: list[list[dict]] = []

    async def enqueue(batch: list[dict]) -> None:
        batches.append(batch)

    batcher = chunks_module.ChunkBatcher(enqueue, turn=1, step=1, max_batch=1)
    piece = "x" * 4096
    for _ in range(chunks_module.MAX_LOGGED_CHARS_PER_STEP // len(piece) + 10):
        batcher.add(piece)
    await batcher.settle()
    logged = sum(len(event["data"]["chunk"]["text"]) for batch in batches for event in batch)
    assert logged == chunks_module.MAX_LOGGED_CHARS_PER_STEP  # the final message holds the rest, once
