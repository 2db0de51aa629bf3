"""Opening the store after the first paint: the placeholder shown meanwhile and the messages of the open.

The app paints at once and opens the workspace (store, index catch-up, model) in a thread. While
it runs, `StoreLoading` stands where the sidebar goes: "Opening sessions…", and a progress bar
with `done/total` while a large directory is indexed for the first time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from sessionref.service.protocols import Progress

if TYPE_CHECKING:
    from sessionref.host.workspace import Workspace
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Label, ProgressBar

WorkspaceOpener = Callable[[Progress], "Workspace"]
"""Opens the workspace (in a worker thread), reporting first-time indexing as `progress(done, total)`."""


class OpenAbandoned(Exception):
    """Raised from a progress report once the app is closing: stops a long walk early."""


class IndexProgressed(Message):
    """`done` of `total` new logs are indexed (posted from the opening thread)."""

    def __init__(self, done: int, total: int) -> None:
        super().__init__()
        self.done = done
        self.total = total


class WorkspaceOpened(Message):
    """The workspace is open; `caught_up` is False when the store still has to walk its logs."""

    def __init__(self, workspace: Workspace, caught_up: bool) -> None:
        super().__init__()
        self.workspace = workspace
        self.caught_up = caught_up


class WorkspaceOpenFailed(Message):
    """Opening the workspace raised `error`."""

    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error


class StoreCaughtUp(Message):
    """The background catch-up of the store finished (titles and new sessions are current), or failed."""

    def __init__(self, error: BaseException | None = None) -> None:
        super().__init__()
        self.error = error


class SessionsChanged(Message):
    """Live discovery found a change on disk: a new, grown, renamed or deleted session."""


class PublishingNote(Message):
    """Publishing to the shared catalog in the background failed: `note` says so in one line."""

    def __init__(self, note: str) -> None:
        super().__init__()
        self.note = note


class StoreLoading(Vertical):
    """Placeholder for the sidebar while the store opens: a heading, a status line and a progress bar."""

    DEFAULT_CSS = """
    StoreLoading {
        width: 32;
        min-width: 20;
        border-right: vkey $panel-lighten-1;
        background: $surface;
        padding: 0 1;

        #store-loading-heading { text-style: bold; color: $text-muted; }
        #store-loading-status { color: $text-muted; margin: 1 0 0 0; }
        #store-loading-count { color: $text-muted; }
        ProgressBar { margin: 1 0 0 0; }
        Bar { width: 1fr; }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.status = "Opening sessions…"

    def compose(self) -> ComposeResult:
        yield Label("Sessions", id="store-loading-heading", markup=False)
        yield Label(self.status, id="store-loading-status", markup=False)
        yield Label("", id="store-loading-count", markup=False)
        yield ProgressBar(total=None, show_eta=False, id="store-loading-bar")

    def show_progress(self, done: int, total: int) -> None:
        """Show `done/total` logs indexed (a first-time index build of a large directory)."""
        self.status = "Indexing sessions…"
        self.query_one("#store-loading-status", Label).update(self.status)
        self.query_one("#store-loading-count", Label).update(f"{done:,} of {total:,}")
        self.query_one("#store-loading-bar", ProgressBar).update(total=max(total, 1), progress=done)
