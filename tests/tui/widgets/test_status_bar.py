"""The status line: literal title and cwd, idle/running, model name, read-only marker."""

from __future__ import annotations

from sessionref_tui.widgets.status_bar import StatusInfo, status_text


def info(**changes: object) -> StatusInfo:
    base: dict[str, object] = {
        "session_id": "s-1",
        "title": "Plan [bold]x[/bold]",
        "cwd": "/w",
        "agent_status": "idle",
        "model_name": "demo model",
    }
    base.update(changes)
    return StatusInfo(**base)  # type: ignore[arg-type]


def test_title_cwd_state_and_model_are_literal() -> None:
    assert status_text(info()).plain == " Plan [bold]x[/bold] · /w   ○ idle   demo model"


def test_a_session_without_title_is_called_new_session_never_its_id() -> None:
    text = status_text(info(title=None, cwd=None, agent_status="running")).plain
    assert text == " New session · (no cwd)   ● running   demo model"


def test_a_draft_says_it_is_not_saved_yet() -> None:
    text = status_text(info(title=None, draft=True)).plain
    assert text.startswith(" New session · not saved until its first message · /w")


def test_read_only_and_activity() -> None:
    text = status_text(info(writable=False, activity="compacting…")).plain
    assert "read-only" in text and "compacting…" in text


def test_escape_sequences_are_shown_escaped() -> None:
    assert "\x1b" not in status_text(info(title="\x1b]0;owned\x07")).plain
