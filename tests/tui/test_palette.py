"""Session switcher rows: literal (inert) label, folder and age; the match is styled, never parsed."""

from __future__ import annotations

from sessionref_tui.palette import APP_COMMANDS, session_hit_display


def test_markup_in_a_title_is_shown_literally_with_the_match_styled() -> None:
    content = session_hit_display("[bold]Plan[/bold] B", "/w", "2d", "plan", same_folder=False)
    assert content.plain == "[bold]Plan[/bold] B  ·  /w · 2d"
    styled = [
        content.plain[span.start : span.end] for span in content.spans if "underline" in str(span.style)
    ]
    assert styled == ["Plan"]


def test_the_folder_is_always_named_and_the_current_sessions_is_marked() -> None:
    here = session_hit_display("t", "/home/ana/w", "1h", "", same_folder=True, home="/home/ana").plain
    assert here == "t  ·  ● ~/w · 1h"
    there = session_hit_display("t", "/srv/x", "1h", "", same_folder=False, home="/home/ana").plain
    assert there == "t  ·  /srv/x · 1h"


def test_missing_cwd_and_escapes() -> None:
    nowhere = session_hit_display("a\x1b[2Jb", None, "1h", "", same_folder=False).plain
    assert nowhere == "a\\x1b[2Jb  ·  (no cwd) · 1h"


def test_every_app_command_names_an_existing_action() -> None:
    from sessionref_tui.chat_screen import ChatScreen

    for command in APP_COMMANDS:
        assert callable(getattr(ChatScreen, f"action_{command.action}", None)), command.action
