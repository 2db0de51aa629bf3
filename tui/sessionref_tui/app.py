"""The sessionref Textual app: the workspace's life around one `ChatScreen`.

The app is a thin shell over a `Workspace`: every send goes through `Workspace.submit` (the same
path the line mode uses), every view is rebuilt from the store's log events, and nothing the user
typed is dropped: the composer keeps the draft until the send has been queued. What is on screen
is the `ChatScreen`'s (`chat_screen.py`); the app owns what outlives a screen:

- the workspace, given or opened after the first paint: given an opener, the app opens the
  workspace in a thread worker (the chat's placeholder counts a large directory's indexing through
  `IndexProgressed` messages), hands it to the chat when `WorkspaceOpened` arrives, and if the store
  was opened from its index alone (`Workspace.caught_up` False) runs `Workspace.catch_up` in another
  thread worker once the sessions are painted. Closing the app stops a running walk at its next
  progress report;
- once the chat says `ChatScreen.Ready` and the store is caught up, the conversation index is built or
  caught up in its own background thread (`Workspace.start_conversation_search`): never before the
  sessions are shown; and the start-up heap is frozen (`freeze_heap`);
- which frames reach the terminal (the chat's unseen picker rehearsal: `textual_compat.filter_frames`).
"""

from __future__ import annotations

import asyncio
import gc
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from sessionref.contract.errors import CodedError
from textual import on, work
from textual.app import App
from textual.screen import Screen

from sessionref_tui.chat_screen import SIDEBAR_MIN_WIDTH, ChatScreen, Clock
from sessionref_tui.display import inert
from sessionref_tui.palette import AppCommands
from sessionref_tui.store_loading import (
    IndexProgressed,
    OpenAbandoned,
    PublishingNote,
    SessionsChanged,
    StoreCaughtUp,
    WorkspaceOpened,
    WorkspaceOpener,
    WorkspaceOpenFailed,
)
from sessionref_tui.textual_compat import filter_frames

if TYPE_CHECKING:
    from sessionref.host.workspace import Workspace


def freeze_heap() -> None:
    """Move everything alive now (the opened store's index and search columns, the widgets) out of
    the collector's reach. At 100k sessions a full collection otherwise walks ~200k long-lived
    objects and pauses typing in the picker for 110-130 ms (bench_tui.py measures it)."""
    gc.freeze()


class SessionrefApp(App[None]):
    """Chat with `@` session mentions over one `Workspace`, given or opened by `open_workspace`.

    `session_id`, `clock`, `show_inspector`, `cursor_blink` and `rehearse_picker` are the chat's
    (`ChatScreen`). With `owns_workspace`, the workspace is closed when the app exits.

    Instead of a `workspace`, `open_workspace` may be given: the app paints first with a placeholder
    for the sidebar (a progress bar while a large store is indexed), and reloads the sidebar once the
    background catch-up is done. A draft can be typed meanwhile (Enter sends once the workspace is
    open; an `@` lookup waits for it). If opening, or showing the opened workspace, fails with a coded
    error, the app exits with return code 1 and `open_error` holds the error.
    """

    CSS_PATH = Path(__file__).with_name("app.tcss")
    TITLE = "sessionref"
    # Textual declares it without ClassVar (so it is, to mypy, an instance variable).
    HORIZONTAL_BREAKPOINTS: list[tuple[int, str]] | None = [  # noqa: RUF012
        (0, "-narrow"),
        (SIDEBAR_MIN_WIDTH, "-medium"),
        (150, "-wide"),
    ]
    COMMANDS = App.COMMANDS | {AppCommands}

    def __init__(
        self,
        workspace: Workspace | None = None,
        *,
        open_workspace: WorkspaceOpener | None = None,
        session_id: str | None = None,
        clock: Clock | None = None,
        owns_workspace: bool = False,
        show_inspector: bool = False,
        cursor_blink: bool = True,
        rehearse_picker: bool = True,
    ) -> None:
        super().__init__()
        if (workspace is None) == (open_workspace is None):
            raise ValueError("give exactly one of workspace and open_workspace")
        self._workspace = workspace
        self._open_workspace = open_workspace
        self._owns_workspace = owns_workspace
        self._abandon = threading.Event()
        self.open_error: BaseException | None = None
        self.heap_frozen = asyncio.Event()
        """Set each time the start-up heap was frozen (after the first session, after the catch-up)."""
        self.chat = ChatScreen(
            workspace,
            session_id=session_id,
            clock=clock,
            show_inspector=show_inspector,
            cursor_blink=cursor_blink,
            rehearse_picker=rehearse_picker,
        )
        """The chat on screen: the session shown, its widgets, keys and actions."""
        filter_frames(self, self.chat.write_frame)

    def get_default_screen(self) -> Screen[None]:
        """The chat is the first and only screen below the modals."""
        return self.chat

    @property
    def workspace(self) -> Workspace:
        """The open workspace (RuntimeError while it is still being opened: `ChatScreen.workspace_ready`)."""
        if self._workspace is None:
            raise RuntimeError("the workspace is still being opened")
        return self._workspace

    def on_mount(self) -> None:
        if self._workspace is None:
            # After the first frame is painted, so the open and the paint do not share the GIL.
            self.call_after_refresh(self._open_in_thread)

    async def on_unmount(self) -> None:
        self.stop_opening()
        if self._owns_workspace and self._workspace is not None:
            await self._workspace.close()

    # ------------------------------------------------------------------ opening

    def stop_opening(self) -> None:
        """Make a running open or catch-up stop at its next progress report (the app is closing)."""
        self._abandon.set()

    def report_progress(self, done: int, total: int) -> None:
        """The progress callback given to the store (any thread); raises `OpenAbandoned` once the
        app is closing, so quitting during a long first-time indexing does not wait for it."""
        if self._abandon.is_set():
            raise OpenAbandoned("the app is closing")
        self.chat.post_message(IndexProgressed(done, total))

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
        self.post_message(WorkspaceOpened(workspace, workspace.caught_up))

    @on(WorkspaceOpened)
    def _workspace_opened(self, message: WorkspaceOpened) -> None:
        self._workspace = message.workspace
        try:
            self.chat.show_workspace(message.workspace)
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

    @on(ChatScreen.Ready)
    def _chat_ready(self, message: ChatScreen.Ready) -> None:
        self.call_after_refresh(self._freeze_heap)
        if self.workspace.caught_up:
            self.call_after_refresh(self.start_conversation_search)
            self._watch_changes()

    def start_conversation_search(self) -> None:
        """Build or catch up the index of what was said, in the background (after the store's own
        catch-up: the index follows the store's listing)."""
        if self._workspace is not None and not self._abandon.is_set():
            self._workspace.start_conversation_search()

    def _freeze_heap(self) -> None:
        freeze_heap()
        self.heap_frozen.set()

    @work(thread=True, group="catch-up", exit_on_error=False)
    def _catch_up_in_thread(self) -> None:
        """Walk the logs for what changed while the store was closed."""
        try:
            self.workspace.catch_up(self.report_progress)
        except Exception as error:  # the index is a cache: say so and keep serving it
            self.post_message(StoreCaughtUp(error))
            return
        self.post_message(StoreCaughtUp())

    def _watch_changes(self) -> None:
        """Keep the lists current from now on: a change on disk re-walks the store, then redraws them."""

        def changed() -> None:
            self.post_message(SessionsChanged())

        if not self._abandon.is_set():
            self.workspace.watch_changes(changed)
            self.workspace.start_publishing(self._publishing_note)

    def _publishing_note(self, note: str | None) -> None:
        """A background publish failed (or works again), heard in the publishing thread."""
        if note is not None:
            self.post_message(PublishingNote(note))

    @on(PublishingNote)
    def _show_publishing_note(self, message: PublishingNote) -> None:
        if not self._abandon.is_set():
            self.notify(inert(message.note), severity="warning", markup=False)

    @on(SessionsChanged)
    def _sessions_changed(self, message: SessionsChanged) -> None:
        if not self._abandon.is_set():
            self.chat.show_caught_up()

    @on(StoreCaughtUp)
    def _store_caught_up(self, message: StoreCaughtUp) -> None:
        self.call_after_refresh(self.start_conversation_search)  # from what the store lists, caught up or not
        if message.error is None:
            self.chat.show_caught_up()
            self.call_after_refresh(self._freeze_heap)
            self._watch_changes()
            return
        code = getattr(message.error, "code", None)
        text = getattr(message.error, "message", None) or str(message.error)
        headline = f"Could not look for sessions changed elsewhere: {text}" + (f" ({code})" if code else "")
        self.notify(inert(headline), severity="warning", markup=False)
