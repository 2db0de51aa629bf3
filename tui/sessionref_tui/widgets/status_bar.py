"""The one-line status bar: session title and cwd, agent idle/running, model name."""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content
from textual.widgets import Static

from sessionref_tui.display import NEW_SESSION_NAME, inert


@dataclass(frozen=True, slots=True)
class StatusInfo:
    """Everything the status bar shows; every string is data and is rendered inert.

    A session without a title is called `NEW_SESSION_NAME`; `draft` marks one that is not on disk
    yet (its first message creates it)."""

    session_id: str
    title: str | None
    cwd: str | None
    agent_status: str
    model_name: str
    activity: str = ""
    writable: bool = True
    draft: bool = False


def status_text(info: StatusInfo) -> Content:
    """The status line assembled from literal segments (no markup is ever parsed from data)."""
    running = info.agent_status == "running"
    parts: list[str | tuple[str, str]] = [
        " ",
        (inert(info.title) if info.title else NEW_SESSION_NAME, "bold"),
        # A separator, not spacing: the note is a second fact about the session, and a styled
        # segment's leading spaces are lost by some renderers (the SVG captures read "New sessionnot
        # saved…"); the dot still separates where that happens.
        *([(" · ", "dim"), ("not saved until its first message", "dim italic")] if info.draft else []),
        (" · ", "dim"),
        (inert(info.cwd) if info.cwd else "(no cwd)", "dim"),
        *([] if info.writable else [("  read-only", "bold $warning")]),
        "   ",
        ("● running", "bold $warning") if running else ("○ idle", "$success"),
    ]
    if info.activity:
        parts += [(" · ", "dim"), (inert(info.activity), "italic")]
    parts += ["   ", (inert(info.model_name), "$accent")]
    return Content.assemble(*parts)


class StatusBar(Static):
    """Shows a `StatusInfo`; call `show` whenever any part of it changes."""

    DEFAULT_CSS = """
    StatusBar {
        height: 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
        background: $panel;
        color: $foreground;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.info: StatusInfo | None = None

    def show(self, info: StatusInfo) -> None:
        """Render `info` (kept in `self.info` so tests can read what is shown)."""
        self.info = info
        self.update(status_text(info))
