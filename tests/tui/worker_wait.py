"""Waiting for an app's workers in a test without tripping over the ones the app itself cancelled."""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.worker import WorkerCancelled, WorkerState

# A worker started while the previous batch is awaited (a preview after a lookup, say) is waited for
# in the next round; this many rounds is far more than any chain of follow-up work the app starts.
MAX_ROUNDS = 50


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
