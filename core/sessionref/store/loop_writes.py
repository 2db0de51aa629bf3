"""`LoopWrites`: the event-loop facade over the store's writes.

Each session has its own ordered write lane on worker threads (`lanes`): a write's place among
that session's writes is fixed when it is queued, and the loop never waits for the disk.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from sessionref.service.protocols import SessionRecord
from sessionref.store.errors import StoreError
from sessionref.store.lanes import on_loop
from sessionref.store.session_writes import SessionWrites

T = TypeVar("T")


def _given(**options: int | None) -> dict[str, int]:
    """The options that were given (not None), to pass on so a left-out one keeps its default."""
    return {name: value for name, value in options.items() if value is not None}


class LoopWrites(SessionWrites):
    """`SessionWrites` queued on each session's write lane, for callers on an event loop."""

    def _in_lane(self, session_id: str, job: Callable[[], T]) -> asyncio.Future[T]:
        """Run `job` on the session's write lane; its place in the order is fixed by this call."""
        loop = asyncio.get_running_loop()
        try:
            return on_loop(loop, self._lanes.submit(session_id, job))
        except StoreError as error:  # closed: the same answer as a write that failed
            refused: asyncio.Future[T] = loop.create_future()
            refused.set_exception(error)
            return refused

    def enqueue_append(
        self, session_id: str, events: Sequence[dict[str, Any]], *, time_ms: int | None = None
    ) -> asyncio.Future[list[dict[str, Any]]]:
        """Queue an `append` on the session's writer and return a future of the written events.

        Call it on a running event loop. The append's place among this session's writes is fixed
        by this call (appends queued one after another land in that order, awaited or not); it
        runs in a worker thread, so the loop never waits for the disk. Errors are those of
        `append`, raised by the future. Cancelling the future does not take the append back.
        """
        batch = list(events)
        stamp = _given(time_ms=time_ms)  # the method's own default applies, even where it is wrapped
        return self._in_lane(session_id, lambda: self.append(session_id, batch, **stamp))

    async def append_async(
        self, session_id: str, events: Sequence[dict[str, Any]], *, time_ms: int | None = None
    ) -> list[dict[str, Any]]:
        """`append` on the session's writer, off the event loop (see `enqueue_append`)."""
        return await self.enqueue_append(session_id, events, time_ms=time_ms)

    async def create_session_async(
        self, *, cwd: str | None, session_id: str | None = None, created_at: int | None = None
    ) -> SessionRecord:
        """`create_session` on the new session's writer, off the event loop."""
        chosen = str(uuid.uuid4()) if session_id is None else session_id
        created = _given(created_at=created_at)
        return await self._in_lane(chosen, lambda: self.create_session(cwd=cwd, session_id=chosen, **created))

    async def rename_async(self, session_id: str, title: str, *, time_ms: int | None = None) -> None:
        """`rename` on the session's writer, off the event loop."""
        stamp = _given(time_ms=time_ms)
        await self._in_lane(session_id, lambda: self.rename(session_id, title, **stamp))

    async def write_compaction_async(
        self, session_id: str, summary: str, *, compaction_id: str | None = None
    ) -> dict[str, Any]:
        """`write_compaction` on the session's writer, off the event loop."""
        return await self._in_lane(
            session_id, lambda: self.write_compaction(session_id, summary, compaction_id=compaction_id)
        )
