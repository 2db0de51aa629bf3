"""Waiting for writes that are already queued: a cancel never abandons one half way.

A write queued on the session's writer always lands (see `sessionref.store.lanes`). A task
cancelled while it waits for one therefore keeps waiting until it has landed, and the cancel is
delivered at the task's next `await`, exactly where it would have arrived had the write been
instantaneous. So the agent always knows what its log holds, even when it is stopped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


async def landed(awaitable: Awaitable[object]) -> None:
    """Wait until `awaitable` (a queued write) has settled, whatever its outcome, through cancels.

    A cancel received meanwhile is re-delivered at the caller's next `await`.
    """
    future = asyncio.ensure_future(awaitable)
    interrupted = False
    while not future.done():
        try:
            await asyncio.wait({future})
        except asyncio.CancelledError:
            interrupted = True
    if interrupted:
        current = asyncio.current_task()
        if current is not None:
            current.cancel()


async def uninterrupted(awaitable: Awaitable[T]) -> T:
    """The result of a queued write, waited for through cancels (see `landed`); raises its error."""
    future = asyncio.ensure_future(awaitable)
    await landed(future)
    return future.result()
