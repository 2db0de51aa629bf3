"""Sidebar grouping: this folder first, then every other folder, newest first inside each."""

from __future__ import annotations

from sessionref_tui.widgets.sidebar import SidebarEntry, group_heading, group_sessions


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


def test_this_folder_is_named_under_its_heading_with_home_shortened() -> None:
    entries = [entry("a", "/home/ana/src/app", 2), entry("b", "/x", 1)]
    here, elsewhere = group_sessions(entries, "/home/ana/src/app")
    assert group_heading(here, "/home/ana/src/app", "/home/ana").plain == "This folder\n~/src/app"
    assert group_heading(elsewhere, "/home/ana/src/app", "/home/ana").plain == "Other folders"
    long = group_heading(here, "/home/ana/" + "deep/" * 20 + "app", "/home/ana").plain.split("\n")[1]
    assert long.startswith("~/deep") and long.endswith("/app") and len(long) <= 29
