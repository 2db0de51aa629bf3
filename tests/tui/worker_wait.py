"""Waiting for an app's workers in a test without tripping over the ones the app itself cancelled."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from textual.app import App
from textual.pilot import Pilot
from textual.worker import WorkerCancelled, WorkerState

# A worker started while the previous batch is awaited (a preview after a lookup, say) is waited for
# in the next round; this many rounds is far more than any chain of follow-up work the app starts.
MAX_ROUNDS = 50
# How often `until` looks again (seconds of the app running between two looks).
POLL_INTERVAL = 0.02


async def workers_done(app: App[Any], *, skip_group: str | None = None) -> None:
    """Return once no worker of `app` (but those of `skip_group`) runs; one that fails raises.

    `WorkerManager.wait_for_complete` raises `WorkerCancelled` when an exclusive worker is replaced
    while it is awaited (a newer preview or lookup cancels the older one: the app working as
    designed), so it cannot be the synchronisation point of a test. This waits for each worker,
    treats a cancellation as that worker being done, and goes round again for workers that were
    started meanwhile.
    """
    for _ in range(MAX_ROUNDS):
        active = [w for w in app.workers if w.state is WorkerState.RUNNING and w.group != skip_group]
        if not active:
            return
        for worker in active:
            try:
                await worker.wait()
            except WorkerCancelled:
                continue
    raise AssertionError(f"the app kept starting workers for {MAX_ROUNDS} rounds")


async def until(
    pilot: Pilot[Any], condition: Callable[[], bool], what: str, *, timeout: float = 60.0
) -> None:
    """Let the app run until `condition()` holds; fail naming `what` if it has not after `timeout` s.

    For a state another thread brings about (the store opened, the index started), which no number
    of event-loop turns is sure to reach on a loaded machine. The timeout only bounds a failure.
    """
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not after {timeout:.0f} s")
        await pilot.pause(POLL_INTERVAL)
