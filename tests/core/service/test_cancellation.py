"""`race`: an aborted signal wins, abandoned work finishes quietly, task cancellation propagates."""

from __future__ import annotations

import asyncio

import pytest
from sessionref.contract.errors import ErrorCode, SessionReferenceError
from sessionref.service.abort import AbortSignal
from sessionref.service.cancellation import race


async def test_without_a_signal_race_is_a_plain_await() -> None:
    async def work() -> int:
        return 7

    assert await race(work(), None) == 7


async def test_errors_of_the_work_pass_through_while_the_signal_is_live() -> None:
    async def work() -> int:
        raise KeyError("boom")

    with pytest.raises(KeyError):
        await race(work(), AbortSignal())


async def test_an_already_aborted_signal_never_starts_a_coroutine() -> None:
    started: list[bool] = []

    async def work() -> None:
        started.append(True)

    signal = AbortSignal()
    signal.abort(ValueError("host cancelled"))
    with pytest.raises(SessionReferenceError) as raised:
        await race(work(), signal)
    assert raised.value.code == ErrorCode.CANCELLED
    assert isinstance(raised.value.cause, ValueError)
    await asyncio.sleep(0)  # one loop iteration: a task scheduled by mistake would have started
    assert started == []


async def test_an_abort_mid_flight_leaves_the_work_running_to_completion() -> None:
    entered, release, finished = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def work() -> str:
        entered.set()
        await release.wait()
        finished.set()
        return "late result"

    signal = AbortSignal()
    racing = asyncio.create_task(race(work(), signal))
    await entered.wait()
    signal.abort("superseded")
    with pytest.raises(SessionReferenceError):
        await racing
    release.set()
    await finished.wait()


async def test_cancelling_the_caller_cancels_the_work() -> None:
    entered = asyncio.Event()
    cancelled = asyncio.Event()

    async def work() -> None:
        entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    racing = asyncio.create_task(race(work(), AbortSignal()))
    await entered.wait()
    racing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await racing
    await cancelled.wait()


async def test_cancelling_the_caller_leaves_no_unretrieved_gather_exception() -> None:
    """A worker cancelled mid-read (the highlight moved) must not make asyncio print to the terminal."""
    import gc

    loop = asyncio.get_running_loop()
    reported: list[dict[str, object]] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    try:
        block = asyncio.Event()
        started = asyncio.Event()

        async def read() -> None:
            started.set()
            await block.wait()

        # The gather future itself is raced, as the service does for parallel reads.
        caller = asyncio.create_task(race(asyncio.gather(read(), read()), AbortSignal()))
        await started.wait()
        caller.cancel()
        with pytest.raises(asyncio.CancelledError):
            await caller
        for _ in range(3):
            await asyncio.sleep(0)
        gc.collect()
    finally:
        loop.set_exception_handler(previous)
    assert [c for c in reported if "never retrieved" in str(c.get("message"))] == []
