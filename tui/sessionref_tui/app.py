"""The sessionref Textual app: sidebar, transcript, composer, inspector, status bar and footer.

The app is a thin shell over a `Workspace`: every send goes through
`Workspace.submit` (the same path the line mode uses), every view is rebuilt from
the store's log events (the store's `subscribe` keeps them live), and nothing the
user typed is dropped: the composer keeps the draft until the send has been queued.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from rich.console import RenderableType
from sessionref.contract.errors import describe_error
from sessionref.service.abort import AbortSignal
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.command import CommandPalette
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer

from sessionref_tui.display import NEW_SESSION_NAME, inert
from sessionref_tui.mention_source import WorkspaceMentionSource
from sessionref_tui.mentions import MentionTarget, mention_for
from sessionref_tui.opening import OpeningApp
from sessionref_tui.palette import AppCommands, SessionSwitcher
from sessionref_tui.screens.confirm_compact import ConfirmCompactScreen
from sessionref_tui.screens.rename import RenameScreen
from sessionref_tui.session_view import Clock, SessionView, error_text, is_agent
from sessionref_tui.store_loading import StoreLoading, WhenReady, WorkspaceOpener
from sessionref_tui.submit_errors import describe_send_error
from sessionref_tui.textual_compat import filter_frames
from sessionref_tui.widgets.composer import Composer
from sessionref_tui.widgets.inspector import Inspector
from sessionref_tui.widgets.mention_popup import MentionPopup
from sessionref_tui.widgets.queued import QueuedMessages
from sessionref_tui.widgets.sidebar import Sidebar
from sessionref_tui.widgets.status_bar import StatusBar
from sessionref_tui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from sessionref.agent import Agent
    from sessionref.host.workspace import Workspace

NEEDS_WORKSPACE = frozenset(
    (
        "new_session",
        "switch_session",
        "rename",
        "compact",
        "cancel",
        "stop_turn",
        "toggle_sidebar",
        "mention_in_new_session",
    )
)
"""Actions unavailable until the workspace is open (the sidebar is a placeholder until then)."""


MENTION_IN_NEW_SESSION = "ctrl+f"
"""Read-only sessions (DSH's, compressed logs) cannot be written: this key continues in a new session
that mentions the one on screen, with the draft (the refusal names it; the footer shows it then)."""

REHEARSAL_LIMIT = 0.5
"""Seconds after which an unseen rehearsal of the picker ends even if no frame laid it out (a
safety net: frames are not written to the terminal while it lasts; it normally takes one frame)."""

COMPACT_KEY = "f8"
"""Compaction asks first and is rare: it is in the palette and on a key nobody presses by reflex.

Ctrl+L, where it used to be, is what terminal users press to redraw the screen, and now does that."""


class SessionrefApp(SessionView):
    """Chat with `@` session mentions over one `Workspace`.

    `session_id` opens that session; otherwise the app starts on a new session in the
    workspace's cwd that is created on disk by its first message (a `DraftSession`: launching
    the app and leaving it writes nothing). `clock` feeds the relative ages. With `owns_workspace`, the
    workspace is closed when the app exits. `cursor_blink=False` keeps snapshots stable.

    Instead of a `workspace`, `open_workspace` may be given (see `OpeningApp`): the app paints
    first with a placeholder for the sidebar (a progress bar while a large store is indexed),
    and reloads the sidebar once the background catch-up is done. A draft can be typed
    meanwhile (Enter sends once the workspace is open; an `@` lookup waits for it).
    """

    CSS_PATH = Path(__file__).with_name("app.tcss")
    TITLE = "sessionref"
    HORIZONTAL_BREAKPOINTS: ClassVar = [(0, "-narrow"), (90, "-medium"), (150, "-wide")]
    COMMANDS: ClassVar = OpeningApp.COMMANDS | {AppCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit", priority=True),
        Binding("ctrl+n", "new_session", "New"),
        Binding("ctrl+o", "switch_session", "Switch"),
        Binding("ctrl+r", "rename", "Rename"),
        Binding("ctrl+l", "redraw", "Redraw", show=False),
        Binding(COMPACT_KEY, "compact", "Compact", show=False),
        Binding(MENTION_IN_NEW_SESSION, "mention_in_new_session", "New session mentioning it"),
        Binding("ctrl+t", "toggle_inspector", "Inspector"),
        Binding("ctrl+g", "toggle_sidebar", "Sidebar"),
        Binding("escape", "cancel", "Cancel send"),
        Binding("escape", "stop_turn", "Stop reply"),
    ]

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
        super().__init__(workspace, open_workspace, clock=clock)
        self.rehearse_picker = rehearse_picker
        """Open the `@` picker once, unseen, after the first session is drawn (`_rehearse_picker`)."""
        self._rehearsed: MentionPopup | None = None
        """The picker while it is rehearsed: frames drawn meanwhile are not written to the terminal."""
        self._initial_session_id = session_id
        self._owns_workspace = owns_workspace
        self._show_inspector = show_inspector
        self._cursor_blink = cursor_blink
        self._submit_signal: AbortSignal | None = None
        filter_frames(self, self._write_frame)

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        with Horizontal(id="body"):
            if self._workspace is None:
                yield StoreLoading(id="store-loading")
            yield Sidebar(id="sidebar")
            with Vertical(id="chat"):
                yield Transcript(id="transcript")
                yield QueuedMessages(id="queued")
                yield Composer(
                    WhenReady(WorkspaceMentionSource(self), self.ready_event),
                    now_ms=self.now_ms,
                    cursor_blink=self._cursor_blink,
                    id="composer",
                )
            yield Inspector(id="inspector")
        yield StatusBar(id="status-bar")
        yield Footer()

    async def on_mount(self) -> None:
        self._main_screen = self.screen
        self.query_one("#inspector").display = self._show_inspector
        self.query_one("#body").set_class(self._show_inspector, "-inspecting")
        composer = self.query_one(Composer)
        if self._workspace is not None:
            self._start()
        else:
            self.query_one(Sidebar).display = False
            composer.set_busy(True, "Opening sessions…")
            self.begin_opening()
        composer.focus()

    def _start(self) -> None:
        """Follow the workspace and show the first session (the workspace is open)."""
        self.follow_workspace()
        if self._initial_session_id is not None:
            self._open_agent(self.workspace.agent(self._initial_session_id))
        else:
            self._open_agent(self.workspace.draft_session())
        self.mark_ready()
        if self.rehearse_picker:
            self.call_after_refresh(self._rehearse_picker)

    @work(group="picker-rehearsal", exit_on_error=False)
    async def _rehearse_picker(self) -> None:
        """Open the picker on what a bare `@` lists, in a frame drawn but not written to the
        terminal, and close it again: the first `@` the user types then costs what later ones do
        (see `MentionPopup.rehearse`). Skipped once the user has started typing."""
        composer = self.query_one(Composer)
        source = composer.source
        if source is None or composer.value or composer.popup.display:
            return
        candidates = await source.candidates("", AbortSignal())
        if not candidates or composer.value or composer.popup.display or self._rehearsed is not None:
            return
        if self.screen is not self._main_screen:
            return  # a modal opened meanwhile: the picker would not be laid out under it
        self._rehearsed = composer.popup
        self._rehearsed.rehearse(candidates)
        self.set_timer(REHEARSAL_LIMIT, self._end_picker_rehearsal)  # in case no frame sizes the popup

    def _end_picker_rehearsal(self) -> None:
        popup, self._rehearsed = self._rehearsed, None
        if popup is None:
            return
        popup.end_rehearsal()
        self.screen.refresh()  # the next frame is written whole: the terminal never saw the unseen ones

    def _write_frame(self, screen: Screen[Any], renderable: RenderableType | None) -> bool:
        """Whether a frame goes to the terminal: not while the picker is rehearsed; the rehearsal ends
        after the first frame that laid the picker out (or one of another screen)."""
        popup = self._rehearsed
        if popup is None:
            return True
        if renderable is not None and (popup.size or screen is not self._main_screen):
            self.call_later(self._end_picker_rehearsal)
        return False

    def show_workspace(self) -> None:
        """The workspace is open: the sidebar replaces its placeholder, the composer can send."""
        self.query_one(Sidebar).display = True
        self.query_one(Composer).set_busy(False)
        self._start()

    def show_caught_up(self) -> None:
        """The store caught up with logs changed elsewhere: titles and new sessions are current."""
        self._refresh_status()
        self.refresh_sidebar()

    async def on_unmount(self) -> None:
        self.stop_opening()
        self.stop_following()
        if self._owns_workspace and self._workspace is not None:
            await self._workspace.close()

    # ------------------------------------------------------------------ submit

    @on(Composer.Submitted)
    def _composer_submitted(self, message: Composer.Submitted) -> None:
        message.stop()
        if not message.value.strip() or self._submit_signal is not None or not self.workspace_ready:
            return
        self._submit_signal = AbortSignal()
        self._send(message.value, self._submit_signal)

    @work(group="submit", exit_on_error=False)
    async def _send(self, value: str, signal: AbortSignal) -> None:
        """Prepare and deliver `value`; on any failure the draft stays exactly as typed."""
        composer = self.query_one(Composer)
        composer.clear_error()
        composer.set_busy(True, "Preparing references… (Esc cancels)")
        self._refresh_footer()
        target = self._agent
        assert target is not None
        try:
            result = await self.workspace.submit(target, value, signal=signal)
        except Exception as error:  # any failure, coded or a bug, must not take the draft with it
            composer.show_error(describe_send_error(*describe_error(error, self.workspace.error_log)))
        else:
            composer.clear_if_unchanged(value)
            if result.created:
                self._session_created(result.agent)
        finally:
            composer.set_busy(False)
            self._submit_signal = None
            self._refresh_footer()

    # ----------------------------------------------------------------- actions

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Show only the keys that matter now: Esc when there is something to cancel or stop,
        rename/compact only for a writable session (and compact once at a time); while the
        workspace is being opened, none of the actions that need it (quitting still works)."""
        if not self.workspace_ready and action in NEEDS_WORKSPACE:
            return False
        if action == "cancel":
            return self._submit_signal is not None
        agent = self._agent
        if action == "stop_turn":
            return (
                self._submit_signal is None
                and is_agent(agent)
                and (agent.status == "running" or bool(self.workspace.queued(agent)))
            )
        if action == "mention_in_new_session":
            return is_agent(agent) and not agent.writable
        if action in ("rename", "compact"):
            # Not before the session exists (a draft), nor for a read-only (DSH .zstd) session;
            # one compaction at a time.
            writable = is_agent(agent) and agent.writable  # cached by the agent: this runs per key
            return writable and not (action == "compact" and self._activity)
        return True

    def action_cancel(self) -> None:
        """Abort the send being prepared (the draft is kept)."""
        if self._submit_signal is not None:
            self._submit_signal.abort("cancelled by the user")

    @work(group="stop", exclusive=True, exit_on_error=False)
    async def action_stop_turn(self) -> None:
        """Stop the running reply (what streamed so far stays in the log); the messages still queued
        for it are not sent and come back into the composer (through `DraftsReturned`)."""
        if is_agent(self._agent):
            await self.workspace.stop(self._agent)

    def action_new_session(self) -> None:
        """Show a new session in the launch folder; it is created on disk by its first message."""
        self._open_agent(self.workspace.draft_session())
        self.query_one(Composer).focus()

    def action_mention_in_new_session(self) -> None:
        """Continue from the (read-only) session on screen: a new session whose draft starts with a
        chip mentioning it, followed by what was typed."""
        from sessionref.service.candidates import label_from_title  # with the workspace (see session_view)

        agent = self._agent
        if not is_agent(agent):
            return
        label = inert(label_from_title(agent.id, self.workspace.store.title(agent.id)))
        chip = mention_for(MentionTarget(agent.id, label))
        composer = self.query_one(Composer)
        typed = composer.value
        self._open_agent(self.workspace.draft_session())
        composer.value = f"{chip} {typed.lstrip()}" if typed.strip() else f"{chip} "
        composer.focus()
        self.notify(f"New session mentioning “{label}”: send to continue from it.", markup=False)

    def action_switch_session(self) -> None:
        """Open the session switcher (search by title, id or folder)."""
        if not CommandPalette.is_open(self):
            self.push_screen(
                CommandPalette(providers=[SessionSwitcher], placeholder="Switch to session…", id="--switcher")
            )

    def action_rename(self) -> None:
        """Ask for a new title for the current session."""
        if not is_agent(self._agent) or isinstance(self.screen, RenameScreen):
            return
        session_id = self._agent.id
        current = self.workspace.store.title(session_id) or ""

        def renamed(title: str | None) -> None:
            if title:
                self._rename(session_id, title)

        self.push_screen(RenameScreen(current), renamed)

    @work(group="rename", exit_on_error=False)
    async def _rename(self, session_id: str, title: str) -> None:
        try:
            await self.workspace.store.rename_async(session_id, title)  # written off the UI loop
        except Exception as error:
            text = error_text(error, "Could not rename the session", self.workspace.error_log)
            self.notify(text, severity="error", markup=False)

    def action_redraw(self) -> None:
        """Paint the whole screen again (Ctrl+L): what another program wrote over it goes away."""
        self.screen.refresh()

    def action_compact(self) -> None:
        """Ask (a modal saying what compaction does), then compact the session on screen."""
        agent = self._agent
        if not is_agent(agent) or isinstance(self.screen, ConfirmCompactScreen):
            return
        name = self.workspace.store.title(agent.id) or NEW_SESSION_NAME

        def answered(confirmed: bool | None) -> None:
            if confirmed:
                self._compact(agent)

        self.push_screen(ConfirmCompactScreen(name), answered)

    @work(group="compact", exclusive=True, exit_on_error=False)
    async def _compact(self, agent: Agent) -> None:
        """Summarise `agent`'s conversation into a compaction checkpoint."""
        self._set_activity("compacting…")
        try:
            await agent.compact()
        except Exception as error:
            text = error_text(error, "Could not compact the session", self.workspace.error_log)
            self.notify(text, severity="error", markup=False)
        else:
            self.notify("Session compacted: earlier messages are now summarised.")
        finally:
            self._set_activity("")

    def action_toggle_inspector(self) -> None:
        """Show or hide the live log inspector."""
        inspector = self.query_one(Inspector)
        inspector.display = not inspector.display
        self.query_one("#body").set_class(inspector.display, "-inspecting")

    def action_toggle_sidebar(self) -> None:
        """Show or hide the sessions sidebar."""
        sidebar = self.query_one(Sidebar)
        sidebar.display = not sidebar.display
