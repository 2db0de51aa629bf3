"""An explicit, host-controlled abort signal (docs/contract.md, decision D5).

asyncio task cancellation always propagates untouched. A host that wants the
upstream `SESSION_REFERENCE_CANCELLED` outcome instead (for example: the user
pressed Esc while `prepare` was reading sources) passes an `AbortSignal` and
calls `abort(reason)` on it.
"""

from __future__ import annotations

import asyncio
from typing import Any


class AbortSignal:
    """A one-way flag with an awaitable event; `abort` is idempotent."""

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self.reason: Any = None

    @property
    def aborted(self) -> bool:
        """True once `abort` has been called."""
        return self._event.is_set()

    def abort(self, reason: Any = None) -> None:
        """Mark the signal aborted; the first reason wins."""
        if not self._event.is_set():
            self.reason = reason if reason is not None else "aborted"
            self._event.set()

    async def wait(self) -> None:
        """Return once the signal is aborted."""
        await self._event.wait()
