"""Racing work against a host's `AbortSignal` (docs/contract.md, decision D5 and §5.4).

An aborted signal turns into `SESSION_REFERENCE_CANCELLED` as soon as it fires;
the raced work itself keeps running and its eventual result is ignored, as
upstream does. asyncio task cancellation is never converted: if the caller's
task is cancelled, the `CancelledError` propagates and the raced work is
cancelled with it.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable
from typing import Any, TypeVar

from sessionref.contract.errors import ErrorCode, SessionReferenceError
from sessionref.service.abort import AbortSignal

T = TypeVar("T")

CANCELLED_MESSAGE = "session reference preparation was cancelled"

# Work abandoned after an abort keeps running; hold a reference until it ends.
_abandoned: set[asyncio.Future[Any]] = set()


def cancelled_error(signal: AbortSignal) -> SessionReferenceError:
    """The `SESSION_REFERENCE_CANCELLED` error for an aborted signal.

    Its cause is the abort reason, wrapped in an `Exception` when it is not one.
    """
    reason = signal.reason
    cause = reason if isinstance(reason, BaseException) else Exception(str(reason))
    return SessionReferenceError(ErrorCode.CANCELLED, CANCELLED_MESSAGE, cause=cause)


def raise_if_aborted(signal: AbortSignal | None) -> None:
    """Raise `SESSION_REFERENCE_CANCELLED` if `signal` is already aborted."""
    if signal is not None and signal.aborted:
        raise cancelled_error(signal)


def _abandon(future: asyncio.Future[T]) -> None:
    """Let `future` finish on its own, silencing its eventual exception."""
    if future.done():
        if not future.cancelled():
            future.exception()
        return
    _abandoned.add(future)

    def _forget(done: asyncio.Future[T]) -> None:
        _abandoned.discard(done)
        if not done.cancelled():
            done.exception()

    future.add_done_callback(_forget)


async def race(work: Awaitable[T], signal: AbortSignal | None) -> T:
    """Await `work`, or raise `SESSION_REFERENCE_CANCELLED` as soon as `signal` aborts.

    Without a signal this is a plain await. If both finish together, the abort wins.
    A coroutine raced against an already aborted signal is closed without starting.
    Exceptions of `work` propagate unchanged while the signal is live.
    """
    if signal is None:
        return await work
    if signal.aborted:
        if inspect.iscoroutine(work):
            work.close()  # never started: nothing to abandon
        else:
            _abandon(asyncio.ensure_future(work))
        raise cancelled_error(signal)
    task = asyncio.ensure_future(work)
    waiter = asyncio.ensure_future(signal.wait())
    try:
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        task.cancel()
        waiter.cancel()
        # A cancelled gather can finish with its CancelledError stored as an exception;
        # retrieve it so asyncio never prints "exception was never retrieved" on a terminal.
        _abandon(task)
        raise
    waiter.cancel()
    if signal.aborted:
        _abandon(task)
        raise cancelled_error(signal)
    return task.result()
