"""Per-session write lanes: every write of one session runs in submission order, off the event loop.

A lane is a FIFO queue of jobs for one key (a session id), drained by one worker thread at a
time; lanes of different sessions drain in parallel on a small shared pool. Submitting fixes a
job's place in its lane at once, so writes a caller submits one after another land one after
another, whether or not it waits for each. A submitted job always runs: cancelling whoever waits
for it (an asyncio task) never takes a write back, because the caller may already have shown it.

`on_loop` turns a lane's thread-side future into an asyncio future resolved on the caller's loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

from sessionref.store.errors import STORE_CLOSED, StoreError

log = logging.getLogger("sessionref.store")

T = TypeVar("T")

WRITER_THREADS = 2
"""Worker threads shared by all lanes of one store: two sessions can write at once (one per core)."""

_Job = tuple[Callable[[], Any], "concurrent.futures.Future[Any]"]


class WriteLanes:
    """Ordered, per-key job queues run on a shared thread pool (see the module doc). Thread-safe."""

    def __init__(self, *, workers: int = WRITER_THREADS, name: str = "sessionref-writer") -> None:
        self._executor = concurrent.futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name)
        self._guard = threading.Lock()
        self._lanes: dict[str, deque[_Job]] = {}
        self._closed = False

    def submit(self, key: str, job: Callable[[], T]) -> concurrent.futures.Future[T]:
        """Queue `job` at the end of lane `key`; returns its future. `STORE_CLOSED` after `close`."""
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        with self._guard:
            if self._closed:
                raise StoreError(STORE_CLOSED, "the session store is closed")
            lane = self._lanes.get(key)
            if lane is None:
                # No worker drains this lane right now: start one (it removes the lane when empty).
                self._lanes[key] = deque([(job, future)])
                self._executor.submit(self._drain, key)
            else:
                lane.append((job, future))
        return future

    def _drain(self, key: str) -> None:
        while True:
            with self._guard:
                lane = self._lanes[key]
                if not lane:
                    del self._lanes[key]
                    return
                job, future = lane.popleft()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = job()
            except BaseException as error:  # handed to whoever waits; the lane goes on
                future.set_exception(error)
            else:
                future.set_result(result)

    def close(self) -> None:
        """Refuse new jobs, run every job already queued, then stop the workers (idempotent)."""
        with self._guard:
            self._closed = True
        self._executor.shutdown(wait=True)


def on_loop(loop: asyncio.AbstractEventLoop, future: concurrent.futures.Future[T]) -> asyncio.Future[T]:
    """An asyncio future on `loop` that settles like `future` (which a worker thread completes).

    Cancelling the returned future only stops the waiting: the job itself still runs.
    """
    settled: asyncio.Future[T] = loop.create_future()

    def copy(done: concurrent.futures.Future[T]) -> None:
        if settled.done():
            return
        error = done.exception()
        if error is not None:
            settled.set_exception(error)
        else:
            settled.set_result(done.result())

    def hop(done: concurrent.futures.Future[T]) -> None:
        try:
            loop.call_soon_threadsafe(copy, done)
        except RuntimeError:  # the loop is closed: nobody is waiting any more
            log.debug("a write finished after its event loop closed")

    future.add_done_callback(hop)
    return settled
