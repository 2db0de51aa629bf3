"""Tests for the sidebar's session list: a layout elsewhere on screen leaves its scrollbar alone."""

from __future__ import annotations

from sessionref_tui.widgets.sidebar import SessionList, Sidebar, SidebarEntry
from textual.app import App, ComposeResult
from textual.widgets import Static

NOW_MS = 1_800_000_000_000


def entries(count: int) -> list[SidebarEntry]:
    return [SidebarEntry(f"s-{index}", f"Session {index}", "/work", NOW_MS - index) for index in range(count)]


class SidebarApp(App[None]):
    CSS = "Screen { layout: horizontal; } Sidebar { width: 32; } #other { height: auto; }"

    def compose(self) -> ComposeResult:
        yield Sidebar(id="sidebar")
        yield Static("other", id="other")


class TestSessionListScrollbar:
    async def test_an_unrelated_layout_does_not_redraw_the_scrollbar(self) -> None:
        app = SidebarApp()
        async with app.run_test(size=(80, 20)) as pilot:
            app.query_one(Sidebar).show_sessions(entries(60), cwd="/work", current_id=None, now_ms=NOW_MS)
            await pilot.pause()
            session_list = app.query_one(SessionList)
            scrollbar = session_list.vertical_scrollbar
            assert session_list.show_vertical_scrollbar
            redraws: list[object] = []
            real_refresh = scrollbar.refresh

            def counting_refresh(*args: object, **kwargs: object) -> object:
                redraws.append(args)
                return real_refresh(*args, **kwargs)  # type: ignore[arg-type]

            scrollbar.refresh = counting_refresh  # type: ignore[method-assign]
            app.query_one("#other", Static).update("other\nnow two lines")  # a layout pass
            await pilot.pause()
            assert redraws == []

    async def test_new_options_still_resize_the_scrollbar(self) -> None:
        app = SidebarApp()
        async with app.run_test(size=(80, 20)) as pilot:
            sidebar = app.query_one(Sidebar)
            sidebar.show_sessions(entries(60), cwd="/work", current_id=None, now_ms=NOW_MS)
            await pilot.pause()
            scrollbar = app.query_one(SessionList).vertical_scrollbar
            long_list = scrollbar.window_virtual_size
            sidebar.show_sessions(entries(20), cwd="/work", current_id=None, now_ms=NOW_MS)
            await pilot.pause()
            assert 0 < scrollbar.window_virtual_size < long_list
