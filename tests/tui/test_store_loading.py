"""The placeholder the app shows while its store opens (the mention source that waits for the
workspace is `sessionref.host.mention_source`, tested in tests/core/host/test_workspace_search.py)."""

from __future__ import annotations

from sessionref_tui.store_loading import StoreLoading
from textual.app import App, ComposeResult
from textual.widgets import Label, ProgressBar


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
