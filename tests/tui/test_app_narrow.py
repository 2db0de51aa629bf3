"""A first-time user's terminal: 80×24 hides the sidebar (Ctrl+G brings it back); F8 is in the footer,
and on a read-only session F8 and Ctrl+R say why nothing happens."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from app_factory import build_harness
from sessionref.host.settings import load_settings
from sessionref.host.workspace import Workspace
from sessionref.models import DemoModel
from sessionref.store import open_store
from sessionref_tui.app import SessionrefApp
from sessionref_tui.chat_screen import SIDEBAR_MIN_WIDTH
from sessionref_tui.demo import seed_demo_store
from sessionref_tui.widgets.sidebar import Sidebar
from test_app_read_only import footer_keys, make_trip_read_only
from textual.pilot import Pilot
from worker_wait import workers_done

CWD = "/home/ana/src/payments"


async def settle(pilot: Pilot[Any]) -> None:
    await workers_done(pilot.app)
    await pilot.pause()


def notices(pilot: Pilot[Any]) -> list[str]:
    return [str(notification.message) for notification in pilot.app._notifications]


async def test_at_80_columns_the_sidebar_hides_and_ctrl_g_brings_it_back(tmp_path: Path) -> None:
    harness = build_harness(tmp_path)
    async with harness.app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        sidebar = pilot.app.query_one(Sidebar)
        assert not sidebar.display
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert sidebar.display
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert not sidebar.display


async def test_a_workspace_opened_after_the_first_frame_keeps_the_narrow_layout(tmp_path: Path) -> None:
    seeded = open_store(tmp_path)
    seed_demo_store(seeded, CWD)
    seeded.close()
    opened = threading.Event()

    def open_workspace(_progress: Any) -> Workspace:
        opened.set()
        return Workspace(
            open_store(tmp_path), DemoModel(pace=0), cwd=CWD, settings=load_settings({}, store_root=tmp_path)
        )

    app = SessionrefApp(open_workspace=open_workspace, owns_workspace=True, cursor_blink=False)
    async with app.run_test(size=(SIDEBAR_MIN_WIDTH - 1, 24)) as pilot:
        for _ in range(3):
            await settle(pilot)
        assert opened.is_set() and app.chat.workspace_ready
        assert not app.query_one(Sidebar).display
    async with SessionrefApp(open_workspace=open_workspace, owns_workspace=True, cursor_blink=False).run_test(
        size=(SIDEBAR_MIN_WIDTH, 24)
    ) as pilot:
        for _ in range(3):
            await settle(pilot)
        assert pilot.app.query_one(Sidebar).display


async def test_f8_is_in_the_footer_of_a_writable_session(tmp_path: Path) -> None:
    harness = build_harness(tmp_path, open_session="retry")
    async with harness.app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        assert "f8" in footer_keys(pilot)


async def test_on_a_read_only_session_f8_and_ctrl_r_say_why_nothing_happens(tmp_path: Path) -> None:
    harness = build_harness(tmp_path, open_session="retry")
    target = make_trip_read_only(harness, tmp_path)
    async with harness.app.run_test(size=(140, 40)) as pilot:
        pilot.app.chat.open_session(target)
        await settle(pilot)
        assert "f8" not in footer_keys(pilot)
        await pilot.press("f8")
        await settle(pilot)
        assert any("cannot be compacted" in notice for notice in notices(pilot))
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert any("cannot be renamed" in notice for notice in notices(pilot))
        assert pilot.app.screen is pilot.app.chat


async def test_the_rename_dialog_keeps_the_old_title_to_edit_not_selected(tmp_path: Path) -> None:
    from sessionref_tui.screens.rename import RenameScreen
    from textual.widgets import Input

    harness = build_harness(tmp_path, open_session="retry")
    async with harness.app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert isinstance(pilot.app.screen, RenameScreen)
        field = pilot.app.screen.query_one(Input)
        assert field.selection.is_empty and field.cursor_position == len(field.value)
        await pilot.press(*" (v2)", "enter")
        await settle(pilot)
        assert harness.store.title(harness.current_id) == "Fix flaky retry test in payments (v2)"


async def test_a_long_referenced_sessions_header_is_cut_with_an_ellipsis(tmp_path: Path) -> None:
    from sessionref_tui.widgets.transcript import SnapshotView

    harness = build_harness(tmp_path)
    async with harness.app.run_test(size=(60, 30)) as pilot:
        for query in ("flaky", "postgres", "incident"):
            await pilot.press("@", *query)
            await settle(pilot)
            await pilot.press("tab")
            await pilot.pause()
        await pilot.press(*"compare", "enter")
        await settle(pilot)
        await pilot.app.chat.agent.wait_idle()
        await settle(pilot)
        title = pilot.app.query_one(SnapshotView).query_one("CollapsibleTitle")
        line = title.render_line(0).text
        assert line.startswith("▶ Referenced sessions · Fix flaky")
        assert line.rstrip().endswith("…")


async def test_notifications_never_cover_the_composer(tmp_path: Path) -> None:
    from sessionref_tui.widgets.composer import Composer

    harness = build_harness(tmp_path, open_session="retry")
    async with harness.app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(pilot)
        pilot.app.notify("Session compacted: earlier messages are now summarised.")
        await pilot.pause()
        await pilot.pause()
        toast = pilot.app.screen.query_one("Toast")
        assert toast.region.height > 0
        assert not toast.region.overlaps(pilot.app.query_one(Composer).region)


async def test_at_80_columns_every_key_that_applies_fits_in_the_footer(tmp_path: Path) -> None:
    from textual.widgets import Footer

    harness = build_harness(tmp_path, open_session="retry")
    async with harness.app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        keys = footer_keys(pilot)
        assert {"ctrl+q", "ctrl+o", "ctrl+r", "f8", "ctrl+t", "ctrl+g"} <= keys
        footer = pilot.app.query_one(Footer)
        assert all(key.region.right <= footer.region.right for key in pilot.app.query("FooterKey"))
        assert footer.max_scroll_x == 0, "nothing of the footer is cut off"
