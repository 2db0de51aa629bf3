"""Batched logging of streamed text deltas as ``assistant/chunk`` events.

Every delta becomes its own ``assistant/chunk`` event (the raw stream is kept) up to
``MAX_LOGGED_CHARS_PER_STEP`` characters of one step; beyond that the deltas are only shown, not
logged, since the step's final ``assistant/message`` holds the whole text anyway (a 64 MiB reply
is then written once, not twice: docs/reliability.md). Events are appended in batches so a fast
stream is not one fsync per token: a batch is sent when it holds ``max_batch`` deltas, when a
delta arrives ``max_delay`` seconds after the batch began, or ``max_delay`` seconds after the
first unsent delta if the stream pauses.

Sending a batch queues it on the session's ordered writer and does not wait for the disk, so the
stream goes on while the batch is written; at most ``MAX_BATCHES_IN_FLIGHT`` are unwritten at a
time (`keep_up` waits beyond that: a slow disk slows the stream down instead of piling up). The
first batch that fails is reported by `keep_up` or `settle`; batches queued after it still land,
in order.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from sessionref.agent.ports import LogEvent
from sessionref.agent.waiting import landed

logger = logging.getLogger(__name__)

DEFAULT_MAX_BATCH = 32
DEFAULT_MAX_DELAY = 0.05
MAX_LOGGED_CHARS_PER_STEP = 1 << 20
"""Characters of one step's deltas logged as chunks; the rest reach the log in the final message only."""
MAX_BATCHES_IN_FLIGHT = 2
"""Sent batches that may still be waiting for the disk before the stream waits for the oldest."""

Enqueue = Callable[[list[LogEvent]], Awaitable[Any]]
"""Queue one batch on the session's ordered writer now; the awaitable settles once it is written."""


class ChunkBatcher:
    """Collects deltas for one step and sends them to the session's writer in batches."""

    def __init__(
        self,
        enqueue: Enqueue,
        *,
        turn: int,
        step: int,
        max_batch: int = DEFAULT_MAX_BATCH,
        max_delay: float = DEFAULT_MAX_DELAY,
    ) -> None:
        self._enqueue = enqueue
        self._turn = turn
        self._step = step
        self._max_batch = max_batch
        self._max_delay = max_delay
        self._pending: list[LogEvent] = []
        self._logged_chars = 0
        self._sent: deque[asyncio.Future[Any]] = deque()
        self._failure: BaseException | None = None
        self._started_at = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._loop = asyncio.get_running_loop()

    def add(self, delta: str) -> None:
        """Queue one text delta; sends the batch when it is full or old enough.

        Once the step has logged `MAX_LOGGED_CHARS_PER_STEP` characters, deltas are no longer logged.
        """
        self._logged_chars += len(delta)
        if self._logged_chars > MAX_LOGGED_CHARS_PER_STEP:
            return
        if not self._pending:
            self._started_at = self._loop.time()
            self._timer = self._loop.call_later(self._max_delay, self.send)
        self._pending.append(
            {
                "type": "assistant/chunk",
                "data": {
                    "turn": self._turn,
                    "step": self._step,
                    "chunk": {"type": "text-delta", "text": delta},
                },
            }
        )
        if len(self._pending) >= self._max_batch or self._loop.time() - self._started_at >= self._max_delay:
            self.send()

    def send(self) -> None:
        """Queue every unsent delta on the writer now (nothing happens when none is waiting)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._pending:
            return
        batch, self._pending = self._pending, []
        self._sent.append(asyncio.ensure_future(self._enqueue(batch)))

    @property
    def in_flight(self) -> int:
        """Sent batches not known to be written yet."""
        self._collect()
        return len(self._sent)

    def _collect(self) -> None:
        """Forget written batches at the head, keeping the first failure."""
        while self._sent and self._sent[0].done():
            self._note(self._sent.popleft())

    def _note(self, sent: asyncio.Future[Any]) -> None:
        error = None if sent.cancelled() else sent.exception()
        if error is not None and self._failure is None:
            self._failure = error
        elif error is not None:
            logger.debug("a later chunk batch failed too: %s", error)

    def _raise_failure(self) -> None:
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure

    async def keep_up(self) -> None:
        """Raise the first failed batch; wait for the oldest batches while too many are unwritten."""
        self._collect()
        self._raise_failure()
        while len(self._sent) > MAX_BATCHES_IN_FLIGHT:
            oldest = self._sent.popleft()
            await landed(oldest)
            self._note(oldest)
            self._collect()
        self._raise_failure()

    async def settle(self) -> None:
        """Wait until every sent batch is written; raise the first that failed (after all settled)."""
        while self._sent:
            sent = self._sent.popleft()
            await landed(sent)
            self._note(sent)
        self._raise_failure()

    def take_pending(self) -> list[LogEvent]:
        """Stop the timer and hand back the unsent chunk events, so the caller can write them in the
        same append as the step's final events."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        pending, self._pending = self._pending, []
        return pending
