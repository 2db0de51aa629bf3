"""The pieces the app uses while its store opens: the waiting mention source and the progress placeholder."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from sessionref.service.abort import AbortSignal
from sessionref_tui.store_loading import StoreLoading, WhenReady
from textual.app import App, ComposeResult
from textual.widgets import Label, ProgressBar


class RecordingSource:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    async def candidates(self, query: str, signal: AbortSignal) -> Sequence[Any]:
        self.calls.append(("candidates", query))
        return [f"hit for {query}"]

    async def preview(self, session_id: str, signal: AbortSignal) -> Any:
        self.calls.append(("preview", session_id))
        return f"preview of {session_id}"


async def test_lookups_wait_for_the_workspace_then_go_to_the_source() -> None:
    source, ready = RecordingSource(), asyncio.Event()
    waiting = WhenReady(source, ready)
    lookup = asyncio.create_task(waiting.candidates("par", AbortSignal()))
    preview = asyncio.create_task(waiting.preview("s1", AbortSignal()))
    await asyncio.sleep(0)  # one turn of the loop: both are now parked on the event
    assert not lookup.done() and not preview.done() and source.calls == []
    ready.set()
    assert await lookup == ["hit for par"]
    assert await preview == "preview of s1"
    assert source.calls == [("candidates", "par"), ("preview", "s1")]


async def test_a_cancelled_lookup_never_reaches_the_source() -> None:
    source, ready = RecordingSource(), asyncio.Event()
    lookup = asyncio.create_task(WhenReady(source, ready).candidates("x", AbortSignal()))
    await asyncio.sleep(0)
    lookup.cancel()
    ready.set()
    await asyncio.gather(lookup, return_exceptions=True)
    assert lookup.cancelled() and source.calls == []


class LoadingApp(App[None]):
    def compose(self) -> ComposeResult:
        yield StoreLoading(id="loading")


async def test_the_placeholder_says_opening_then_counts_the_indexing() -> None:
    app = LoadingApp()
    async with app.run_test(size=(60, 12)) as pilot:
        loading = app.query_one(StoreLoading)
        status = app.query_one("#store-loading-status", Label)
        bar = app.query_one(ProgressBar)
        assert str(status.render()) == "Opening sessions…" and bar.total is None
        loading.show_progress(2_500, 10_000)
        await pilot.pause()
        assert str(status.render()) == "Indexing sessions…"
        assert str(app.query_one("#store-loading-count", Label).render()) == "2,500 of 10,000"
        assert bar.total == 10_000 and bar.progress == 2_500
