"""Ages and "newest first" mean last activity everywhere: sidebar, picker rows, preview and switcher."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from app_factory import FIXED_NOW_MS, Harness, build_harness, search_palette, session_id_for
from composer_harness import NOW_MS, ComposerHarness, FakeCandidate, FakeSource, rendered, settle, type_text
from sessionref.service.protocols import SessionRecord
from sessionref_tui.widgets.candidate_rows import RowFields
from sessionref_tui.widgets.sidebar import Sidebar, SidebarEntry
from textual.command import CommandPalette
from worker_wait import workers_done

MINUTE_MS = 60_000
DAY_MS = 24 * 60 * MINUTE_MS


def make_release_active_a_minute_ago(harness: Harness) -> None:
    """The store answers with `updated_at` filled: the release session (created 3 days ago) was just active.

    Stands in for the store's own last-activity ranking, which another part of the project fills."""
    search = harness.store.search_candidates
    active = {session_id_for("release"): FIXED_NOW_MS - MINUTE_MS}

    async def search_candidates(**kwargs: Any) -> Sequence[tuple[SessionRecord, str]]:
        found = [
            (replace(record, updated_at=active.get(record.id)), label)
            for record, label in await search(**kwargs)
        ]
        return sorted(found, key=lambda pair: -pair[0].last_activity)

    harness.store.search_candidates = search_candidates  # type: ignore[method-assign]


def test_a_sidebar_entry_is_aged_by_its_last_activity() -> None:
    record = SessionRecord("s-1", 1_000, "/w", updated_at=5_000)
    assert SidebarEntry.of(record, "Plan").last_activity == 5_000
    assert SidebarEntry.of(SessionRecord("s-2", 1_000, "/w"), "s-2") == SidebarEntry("s-2", None, "/w", 1_000)


def test_a_picker_row_is_aged_by_its_last_activity() -> None:
    candidate = FakeCandidate("s", "Busy", created_at=NOW_MS - 30 * DAY_MS, updated_at=NOW_MS - 2 * MINUTE_MS)
    assert RowFields.of(candidate, NOW_MS).age == "2m"


async def test_the_preview_says_when_the_session_was_last_active() -> None:
    busy = FakeCandidate("s-busy", "Busy", created_at=NOW_MS - DAY_MS, updated_at=NOW_MS - 180 * MINUTE_MS)
    app = ComposerHarness(FakeSource([busy]))
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "@")
        await settle(pilot)
        assert "Busy · 60 messages · active 3h ago" in rendered(app.composer.popup.preview)


async def test_the_sidebar_puts_the_most_recently_active_first_with_its_age(tmp_path: Path) -> None:
    harness = build_harness(tmp_path)
    make_release_active_a_minute_ago(harness)
    async with harness.app.run_test(size=(140, 40)) as pilot:
        await workers_done(pilot.app)
        await pilot.pause()
        sidebar = pilot.app.query_one(Sidebar)
        here = [entry.session_id for entry in sidebar.entries if entry.cwd == harness.workspace.cwd]
        assert here == [harness.current_id, *(session_id_for(name) for name in ("release", "retry", "index"))]
        prompt = str(sidebar.query_one("#session-list").get_option(session_id_for("release")).prompt)
        assert "1m" in prompt and "3d" not in prompt


async def test_the_switcher_ages_sessions_by_last_activity(tmp_path: Path) -> None:
    harness = build_harness(tmp_path)
    make_release_active_a_minute_ago(harness)
    async with harness.app.run_test(size=(140, 40)) as pilot:
        await search_palette(pilot, "ctrl+o", "release")
        palette = pilot.app.screen
        assert isinstance(palette, CommandPalette)
        shown = [str(option.prompt) for option in palette.query_one("CommandList").options]
        assert any("Release checklist v2.3" in text and text.endswith("· 1m") for text in shown)
