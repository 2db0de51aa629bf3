"""Sidebar grouping: this folder first, then every other folder, newest first inside each."""

from __future__ import annotations

from sessionref_tui.widgets.sidebar import SidebarEntry, group_sessions


def entry(session_id: str, cwd: str | None, last_activity: int) -> SidebarEntry:
    return SidebarEntry(session_id, None, cwd, last_activity)


def test_this_folder_first_and_order_kept() -> None:
    entries = [entry("a", "/x", 5), entry("b", "/here", 4), entry("c", None, 3), entry("d", "/here", 2)]
    groups = group_sessions(entries, "/here")
    assert [(group.heading, [e.session_id for e in group.entries]) for group in groups] == [
        ("This folder", ["b", "d"]),
        ("Other folders", ["a", "c"]),
    ]


def test_no_cwd_means_everything_is_elsewhere_and_empty_groups_vanish() -> None:
    groups = group_sessions([entry("a", None, 1)], None)
    assert [group.heading for group in groups] == ["Other folders"]
