"""Writes off the event loop: per-session order under concurrency, subscribers on their loop,
async reads that never wait for the store lock on the loop."""

from __future__ import annotations

import asyncio
import random
import threading
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from sessionref.store import SessionStore, StoreError, open_store
from sessionref.store.lanes import WriteLanes


def chunk(text: str) -> dict[str, Any]:
    return {"type": "assistant/chunk", "data": {"chunk": {"type": "text-delta", "text": text}}}


def texts(store: SessionStore, session_id: str) -> list[str]:
    return [event["data"]["chunk"]["text"] for event in store.read_log(session_id)[1]]


def test_lanes_keep_each_keys_order_while_keys_run_in_parallel() -> None:
    rng = random.Random(7)
    delays = {(key, n): rng.uniform(0, 0.002) for key in "ab" for n in range(60)}
    ran: list[tuple[str, int]] = []
    running: dict[str, int] = {"a": 0, "b": 0}
    overlap = threading.Event()
    guard = threading.Lock()

    def job(key: str, n: int) -> int:
        with guard:
            running[key] += 1
            assert running[key] == 1, "two jobs of one key ran at once"
            if running["a"] and running["b"]:
                overlap.set()
        time.sleep(delays[(key, n)])  # a random delay: the fake writer's disk
        with guard:
            ran.append((key, n))
            running[key] -= 1
        return n

    lanes = WriteLanes(workers=2)
    futures = [lanes.submit(key, lambda key=key, n=n: job(key, n)) for n in range(60) for key in "ab"]
    assert [future.result(timeout=30) for future in futures] == [n for n in range(60) for _ in "ab"]
    lanes.close()
    for key in "ab":
        assert [n for k, n in ran if k == key] == list(range(60))
    assert overlap.is_set()  # the two sessions did not wait for each other


def test_a_failing_job_fails_its_future_and_the_lane_goes_on() -> None:
    lanes = WriteLanes()

    def fail() -> None:
        raise OSError("disk full")

    failed = lanes.submit("s", fail)
    after = lanes.submit("s", lambda: "next")
    assert after.result(timeout=10) == "next"
    with pytest.raises(OSError):
        failed.result()
    lanes.close()
    with pytest.raises(StoreError) as closed:
        lanes.submit("s", lambda: None)
    assert closed.value.code == "STORE_CLOSED"


async def test_appends_of_two_sessions_land_in_submission_order_with_random_disk_delays(
    store: SessionStore,
) -> None:
    store.create_session(cwd=None, session_id="s1")
    store.create_session(cwd=None, session_id="s2")
    rng = random.Random(11)
    real_append = store.append

    def slow_append(session_id: str, events: Any, **options: Any) -> Any:
        time.sleep(rng.uniform(0, 0.003))  # the fake writer: a disk of random speed
        return real_append(session_id, events, **options)

    store.append = slow_append  # type: ignore[method-assign]
    futures = []
    for n in range(40):
        for session_id in ("s1", "s2"):
            # Not awaited one by one: the order is fixed when an append is queued.
            futures.append(
                store.on_lane(
                    session_id, store.append, session_id, [chunk(f"{session_id}-{n}a"), chunk(f"{n}b")]
                )
            )
    written = await asyncio.gather(*futures)
    for session_id in ("s1", "s2"):
        expected = [text for n in range(40) for text in (f"{session_id}-{n}a", f"{n}b")]
        assert texts(store, session_id) == expected
        assert [event["seq"] for event in store.read_log(session_id)[1]] == list(range(80))
    # Each future gave back its own batch, numbered where it landed.
    seqs = [[event["seq"] for event in batch] for batch in written[::2]]
    assert seqs == [[2 * n, 2 * n + 1] for n in range(40)]


async def test_subscribers_are_called_on_their_own_loop_in_write_order(store: SessionStore) -> None:
    store.create_session(cwd=None, session_id="s1")
    loop_thread = threading.get_ident()
    calls: list[tuple[int, list[str]]] = []
    done = asyncio.Event()

    def listener(session_id: str, events: list[dict[str, Any]]) -> None:
        calls.append((threading.get_ident(), [event["data"]["chunk"]["text"] for event in events]))
        if len(calls) == 20:
            done.set()

    store.subscribe(listener)
    for n in range(20):
        store.on_lane("s1", store.append, "s1", [chunk(str(n))])
    await done.wait()
    assert [texts for _, texts in calls] == [[str(n)] for n in range(20)]
    assert {thread for thread, _ in calls} == {loop_thread}  # hopped over from the writer threads


async def test_an_unsubscribed_listener_is_not_called_for_a_call_on_its_way(store: SessionStore) -> None:
    store.create_session(cwd=None, session_id="s1")
    seen: list[str] = []
    unsubscribe = store.subscribe(lambda session_id, events: seen.append(session_id))
    original = store.append
    written = threading.Event()

    def append_then_signal(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)  # the call to the listener is queued on the loop now
        written.set()
        return result

    store.append = append_then_signal  # type: ignore[method-assign]
    pending = store.on_lane("s1", store.append, "s1", [chunk("a")])
    assert written.wait(10)  # blocks the loop on purpose: the listener's call waits in its queue
    unsubscribe()  # e.g. the app closing meanwhile
    await pending
    assert seen == []


def test_a_subscriber_without_a_loop_is_called_in_the_writing_thread(store: SessionStore) -> None:
    store.create_session(cwd=None, session_id="s1")
    threads: list[int] = []
    store.subscribe(lambda session_id, events: threads.append(threading.get_ident()))

    async def write() -> None:
        await store.on_lane("s1", store.append, "s1", [chunk("a")])

    asyncio.run(write())
    assert len(threads) == 1 and threads[0] != threading.get_ident()


async def test_async_reads_never_wait_for_the_store_lock_on_the_loop(store: SessionStore) -> None:
    store.create_session(cwd="/w", session_id="s1")
    held, release = threading.Event(), threading.Event()

    def hold_the_lock() -> None:  # as a catch-up applying its walk would
        with store.state.lock:
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold_the_lock)
    holder.start()
    held.wait(10)
    search = asyncio.ensure_future(
        store.search_candidates(exclude_id="", target_cwd="/w", needle="", limit=5)
    )
    titles = asyncio.ensure_future(store.read_titles(["s1"]))
    loop_ran = asyncio.Event()
    asyncio.get_running_loop().call_soon(loop_ran.set)
    await loop_ran.wait()  # the loop turns while the lock is held elsewhere
    assert not search.done() and not titles.done()
    release.set()
    assert [record.id for record, _ in await search] == ["s1"]
    assert await titles == {"s1": None}
    holder.join()


async def test_writes_queued_before_close_still_land(tmp_path: Path) -> None:
    store = open_store(tmp_path / "store")
    store.create_session(cwd=None, session_id="s1")
    pending = [store.on_lane("s1", store.append, "s1", [chunk(str(n))]) for n in range(5)]
    await asyncio.to_thread(store.close)
    await asyncio.gather(*pending)
    with pytest.raises(StoreError) as closed:
        await store.on_lane("s1", store.append, "s1", [chunk("late")])
    assert closed.value.code == "STORE_CLOSED"
    with closing(open_store(tmp_path / "store")) as reopened:
        assert texts(reopened, "s1") == [str(n) for n in range(5)]


async def test_async_create_rename_and_compaction_run_on_the_session_writer(store: SessionStore) -> None:
    record = await store.on_lane("s1", store.create_session, cwd="/w", session_id="s1", created_at=5)
    assert (record.id, record.cwd, record.created_at) == ("s1", "/w", 5)
    await store.on_lane("s1", store.rename, "s1", "A title")
    assert store.title("s1") == "A title"
    await store.on_lane(
        "s1",
        store.append,
        "s1",
        [
            {
                "type": "user/message",
                "surfaceOp": "append",
                "data": {
                    "source": {"kind": "user"},
                    "content": [{"type": "text", "text": "q"}],
                    "role": "user",
                    "id": "m1",
                },
            }
        ],
    )
    checkpoint = await store.on_lane("s1", store.write_compaction, "s1", "summary")
    assert checkpoint["surfaceOp"]["op"] == "replace"
