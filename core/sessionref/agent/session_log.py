"""`SessionLog`: the agent's side of one session's log — its writes, its kept surface, its turn numbers.

The log is the source of truth. The surface a model request is built from is folded from the log
once (the store's ``read_surface``) and then kept by folding, in seq order, each batch the store
confirms written (the same fold as contract.md §3.2: ``"append"`` adds at the tail, a replace
takes the place of the surface range it names). A step therefore never re-reads the log it has
just written.

When the agent cannot know what the log holds, it drops what it kept and the next request reads
the log again:

* a confirmed batch does not start at the seq after the last one it knows (something else
  appended in between: another process, a rename or a compaction written past the agent);
* a write failed or was cancelled (its outcome in the log is unknown);
* a replace names seqs that are not on the kept surface, or a ``surfaceOp`` it does not know.

Every store write the agent makes goes through this class (`sessionref.agent.ports.AgentStore`'s
``on_lane`` with ``append`` or ``write_compaction`` is called nowhere else).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, cast

from sessionref.agent.events import last_turn_number
from sessionref.agent.ports import AgentStore, LogEvent
from sessionref.agent.waiting import uninterrupted


class SessionLog:
    """One session's log as the agent writes and knows it (create it on the agent's event loop)."""

    def __init__(self, store: AgentStore, session_id: str) -> None:
        self._store = store
        self.session_id = session_id
        self._surface: list[LogEvent] | None = None
        """The surface events in fold order, or None when the next request must read the log."""
        self._through: int | None = None
        """The last seq the kept surface accounts for (None: an empty log)."""
        self._last_turn: int | None = None

    # -- writes ------------------------------------------------------------------------------

    def queue_append(self, batch: Sequence[LogEvent]) -> asyncio.Future[list[LogEvent]]:
        """Queue an append on the session's writer now (its place in the log is fixed here).

        The future gives the written events; once it settles they are folded into the kept
        surface (or, if the write failed, the kept surface is dropped).
        """
        store, session_id = self._store, self.session_id
        future = asyncio.ensure_future(store.on_lane(session_id, store.append, session_id, list(batch)))
        future.add_done_callback(self._landed)
        return future

    async def write_compaction(self, summary: str) -> LogEvent:
        """Write a compaction checkpoint replacing the whole surface; returns the written event."""
        try:
            store, session_id = self._store, self.session_id
            event = await uninterrupted(
                store.on_lane(session_id, store.write_compaction, session_id, summary)
            )
        except BaseException:
            self._forget()
            raise
        self._fold([event])
        return event

    def _landed(self, future: asyncio.Future[list[LogEvent]]) -> None:
        if future.cancelled() or future.exception() is not None:
            self._forget()
        else:
            self._fold(future.result())

    # -- the kept surface ----------------------------------------------------------------------

    async def surface_events(self) -> list[LogEvent]:
        """The session's surface events in fold order: the kept ones, or read from the log."""
        if self._surface is None:
            snapshot = await self._store.read_surface(self.session_id)
            self._surface = [cast(LogEvent, event) for event in snapshot["events"]]
            self._through = snapshot["capturedThroughSeq"]
        return list(self._surface)

    def _forget(self) -> None:
        self._surface = None
        self._through = None

    def _fold(self, written: Sequence[LogEvent]) -> None:
        """Fold a batch the store wrote; a batch the last surface read already held is skipped."""
        if self._surface is None or not written:
            return  # nothing kept: the next request reads a log that holds this batch
        first = written[0].get("seq")
        if isinstance(first, int) and self._through is not None and first <= self._through:
            return
        for event in written:
            expected = 0 if self._through is None else self._through + 1
            if event.get("seq") != expected or not _fold_event(self._surface, event):
                self._forget()
                self._last_turn = None  # someone else wrote: their turns count too
                return
            self._through = expected

    # -- turn numbers --------------------------------------------------------------------------

    async def next_turn_number(self) -> int:
        """The number of the turn about to start: one past the log's last (read once, then counted)."""
        if self._last_turn is None:
            _, logged = await uninterrupted(asyncio.to_thread(self._store.read_log, self.session_id))
            self._last_turn = last_turn_number(logged)
        self._last_turn += 1
        return self._last_turn

    def turn_not_started(self) -> None:
        """The last numbered turn was not logged: the next number is read from the log again."""
        self._last_turn = None


def _fold_event(surface: list[LogEvent], event: LogEvent) -> bool:
    """Apply one written event to `surface`; False when the kept surface cannot say how."""
    if "surfaceOp" not in event:
        return True  # log-only
    op: Any = event["surfaceOp"]
    if op == "append":
        surface.append(event)
        return True
    if not isinstance(op, dict) or op.get("op") != "replace":
        return False
    start, end = op.get("start", op.get("startSeq")), op.get("end", op.get("endSeq"))
    seqs = [item.get("seq") for item in surface]
    if start not in seqs or end not in seqs:
        return False
    first, last = seqs.index(start), seqs.index(end)
    if first > last:
        return False
    surface[first : last + 1] = [event]
    return True
