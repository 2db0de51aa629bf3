"""Batched logging of streamed text deltas as ``assistant/chunk`` events.

Every delta becomes its own ``assistant/chunk`` event (the raw stream is kept), but events are
appended in batches so a fast stream is not one fsync per token: a batch is written when it
holds ``max_batch`` deltas, when a delta arrives ``max_delay`` seconds after the batch began, or
``max_delay`` seconds after the first unwritten delta if the stream pauses.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from typing import Any

logger = logging.getLogger(__name__)

DEFAULT_MAX_BATCH = 32
DEFAULT_MAX_DELAY = 0.05


class ChunkBatcher:
    """Collects deltas for one step and appends them through ``write`` in batches."""

    def __init__(
        self,
        write: Callable[[Sequence[dict[str, Any]]], object],
        *,
        turn: int,
        step: int,
        max_batch: int = DEFAULT_MAX_BATCH,
        max_delay: float = DEFAULT_MAX_DELAY,
    ) -> None:
        self._write = write
        self._turn = turn
        self._step = step
        self._max_batch = max_batch
        self._max_delay = max_delay
        self._pending: list[dict[str, Any]] = []
        self._started_at = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._loop = asyncio.get_running_loop()

    def add(self, delta: str) -> None:
        """Queue one text delta; writes the batch when it is full or old enough."""
        if not self._pending:
            self._started_at = self._loop.time()
            self._timer = self._loop.call_later(self._max_delay, self._flush_from_timer)
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
            self.flush()

    def flush(self) -> None:
        """Write every queued delta now (nothing happens when none is queued)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._pending:
            return
        batch, self._pending = self._pending, []
        try:
            self._write(batch)
        except BaseException:
            self._pending = batch + self._pending  # kept for the step's final flush
            raise

    def take_pending(self) -> list[dict[str, Any]]:
        """Stop the timer and hand back the unwritten chunk events, so the caller can write them
        in the same append as the step's final events."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        pending, self._pending = self._pending, []
        return pending

    def _flush_from_timer(self) -> None:
        self._timer = None
        try:
            self.flush()
        except Exception:
            # The step's final flush reports the failure through the turn; here we only record it.
            logger.exception("writing streamed chunks failed")
