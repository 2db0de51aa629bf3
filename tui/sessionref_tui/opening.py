"""`OpeningApp`: the base of the chat app that holds its workspace, or opens it after the first paint.

Given an opener instead of a workspace, the app paints first, opens the workspace in a thread
worker (progress messages while a large directory is indexed), shows it, and if the store was
opened from its index alone (`caught_up` False) runs `store.refresh()` in another thread worker
once the sessions are painted. Closing the app stops a running walk at its next progress report.
Last, once the store is caught up, the conversation index is built or caught up in its own
background thread (`Workspace.start_conversation_search`): never before the sessions are shown.
"""

from __future__ import annotations

import asyncio
import gc
import threading
from typing import TYPE_CHECKING

from sessionref.contract.errors import CodedError
from textual import on, work
from textual.app import App

from sessionref_tui.display import inert
from sessionref_tui.store_loading import (
    IndexProgressed,
    OpenAbandoned,
    StoreCaughtUp,
    StoreLoading,
    WorkspaceOpened,
    WorkspaceOpener,
    WorkspaceOpenFailed,
)

if TYPE_CHECKING:
    from sessionref.host.workspace import Workspace


def freeze_heap() -> None:
    """Move everything alive now (the opened store's index and search columns, the widgets) out of
    the collector's reach. At 100k sessions a full collection otherwise walks ~200k long-lived
    objects and pauses typing in the picker for 110-130 ms (bench_tui.py measures it)."""
    gc.freeze()


class OpeningApp(App[None]):
    """An app over one `Workspace`, given at construction or opened by `open_workspace`.

    Subclasses implement `show_workspace` (on the event loop, once the workspace is open; it
    calls `mark_ready` when the first session is on screen) and `show_caught_up` (after the
    background catch-up). If opening or `show_workspace` fails with a coded error, the app
    exits with return code 1 and `open_error` holds the error.
    """

    def __init__(self, workspace: Workspace | None, open_workspace: WorkspaceOpener | None) -> None:
        super().__init__()
        if (workspace is None) == (open_workspace is None):
            raise ValueError("give exactly one of workspace and open_workspace")
        self._workspace = workspace
        self._open_workspace = open_workspace
        self._opened = asyncio.Event()
        self._abandon = threading.Event()
        self.open_error: BaseException | None = None
        self.heap_frozen = asyncio.Event()
        """Set each time the start-up heap was frozen (after the first session, after the catch-up)."""

    @property
    def workspace(self) -> Workspace:
        """The open workspace (RuntimeError while it is still being opened: see `workspace_ready`)."""
        if self._workspace is None:
            raise RuntimeError("the workspace is still being opened")
        return self._workspace

    @property
    def workspace_ready(self) -> bool:
        """Whether the workspace is open and the first session is on screen."""
        return self._opened.is_set()

    @property
    def ready_event(self) -> asyncio.Event:
        """Set once the workspace is open and shown (what waiting lookups wait for)."""
        return self._opened

    def mark_ready(self) -> None:
        """Say the workspace is open and its first session is on screen."""
        self._opened.set()
        self.call_after_refresh(self._freeze_heap)
        if bool(getattr(self.workspace.store, "caught_up", True)):
            self.call_after_refresh(self.start_conversation_search)

    def start_conversation_search(self) -> None:
        """Build or catch up the index of what was said, in the background (after the store's own
        catch-up: the index follows the store's listing)."""
        if self._workspace is not None and not self._abandon.is_set():
            self._workspace.start_conversation_search()

    def _freeze_heap(self) -> None:
        freeze_heap()
        self.heap_frozen.set()

    def show_workspace(self) -> None:
        """Show the workspace that was just opened (subclass hook)."""
        raise NotImplementedError

    def show_caught_up(self) -> None:
        """Refresh what the background catch-up may have changed (subclass hook)."""

    def begin_opening(self) -> None:
        """Open the workspace in a thread, after the next frame is painted (so both do not share the GIL)."""
        self.call_after_refresh(self._open_in_thread)

    def stop_opening(self) -> None:
        """Make a running open or catch-up stop at its next progress report (the app is closing)."""
        self._abandon.set()

    def report_progress(self, done: int, total: int) -> None:
        """The progress callback given to the store (any thread); raises `OpenAbandoned` once the
        app is closing, so quitting during a long first-time indexing does not wait for it."""
        if self._abandon.is_set():
            raise OpenAbandoned("the app is closing")
        self.post_message(IndexProgressed(done, total))

    @work(thread=True, group="open", exit_on_error=False)
    def _open_in_thread(self) -> None:
        """Open the workspace off the event loop; the result comes back as a message."""
        opener = self._open_workspace
        assert opener is not None
        try:
            workspace = opener(self.report_progress)
        except Exception as error:
            self.post_message(WorkspaceOpenFailed(error))
            return
        self.post_message(WorkspaceOpened(workspace, bool(getattr(workspace.store, "caught_up", True))))

    @on(IndexProgressed)
    def _index_progressed(self, message: IndexProgressed) -> None:
        for loading in self.query(StoreLoading):
            loading.show_progress(message.done, message.total)

    @on(WorkspaceOpened)
    def _workspace_opened(self, message: WorkspaceOpened) -> None:
        self._workspace = message.workspace
        for loading in self.query(StoreLoading):
            loading.remove()
        try:
            self.show_workspace()
        except Exception as error:
            if not isinstance(error, CodedError):
                raise
            self._fail(error)
            return
        if not message.caught_up:
            # After the sessions are painted: the walk would slow the first sidebar fill.
            self.call_after_refresh(self._catch_up_in_thread)

    @on(WorkspaceOpenFailed)
    def _workspace_open_failed(self, message: WorkspaceOpenFailed) -> None:
        self._fail(message.error)

    def _fail(self, error: BaseException) -> None:
        self.open_error = error
        self.exit(return_code=1)

    @work(thread=True, group="catch-up", exit_on_error=False)
    def _catch_up_in_thread(self) -> None:
        """Walk the logs for what changed while the store was closed."""
        try:
            self.workspace.store.refresh(progress=self.report_progress)
        except Exception as error:  # the index is a cache: say so and keep serving it
            self.post_message(StoreCaughtUp(error))
            return
        self.post_message(StoreCaughtUp())

    @on(StoreCaughtUp)
    def _store_caught_up(self, message: StoreCaughtUp) -> None:
        self.call_after_refresh(self.start_conversation_search)  # from what the store lists, caught up or not
        if message.error is None:
            self.show_caught_up()
            self.call_after_refresh(self._freeze_heap)
            return
        code = getattr(message.error, "code", None)
        text = getattr(message.error, "message", None) or str(message.error)
        headline = f"Could not look for sessions changed elsewhere: {text}" + (f" ({code})" if code else "")
        self.notify(inert(headline), severity="warning", markup=False)
