"""The sessionref Textual app: sidebar, transcript, composer, inspector, status bar and footer.

The app is a thin shell over a `Workspace`: every send goes through
`Workspace.submit` (the same path the line mode uses), every view is rebuilt from
the store's log events (the store's `subscribe` keeps them live), and nothing the
user typed is dropped: the composer keeps the draft until the send has been queued.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from sessionref.agent import Agent
from sessionref.errors import SessionReferenceError
from sessionref.signal import AbortSignal
from sessionref.workspace import DraftSession, Workspace
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.command import CommandPalette
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer

from sessionref_tui.display import inert
from sessionref_tui.opening import OpeningApp
from sessionref_tui.palette import AppCommands, SessionSwitcher
from sessionref_tui.screens.rename import RenameScreen
from sessionref_tui.store_loading import StoreLoading, WhenReady, WorkspaceOpener
from sessionref_tui.submit_errors import describe_send_error
from sessionref_tui.widgets.composer import Composer
from sessionref_tui.widgets.inspector import Inspector
from sessionref_tui.widgets.mention_source import WorkspaceMentionSource
from sessionref_tui.widgets.sidebar import Sidebar, SidebarEntry
from sessionref_tui.widgets.status_bar import StatusBar, StatusInfo
from sessionref_tui.widgets.transcript import Transcript

SIDEBAR_LIMIT = 200
"""The sidebar lists at most this many sessions (this folder first); the switcher searches them all."""

NEEDS_WORKSPACE = frozenset(
    ("new_session", "switch_session", "rename", "compact", "cancel", "stop_turn", "toggle_sidebar")
)
"""Actions unavailable until the workspace is open (the sidebar is a placeholder until then)."""

Clock = Callable[[], int]
"""Returns "now" in milliseconds since the epoch (injected in tests so ages are stable)."""


def system_clock() -> int:
    """The wall clock in milliseconds."""
    return int(time.time() * 1000)


class LogAppended(Message):
    """The store appended `events` to `session_id` (posted from the store's listener)."""

    def __init__(self, session_id: str, events: list[dict[str, Any]]) -> None:
        super().__init__()
        self.session_id = session_id
        self.events = events


class AgentStatusChanged(Message):
    """The current agent went idle or started running."""

    def __init__(self, session_id: str, status: str) -> None:
        super().__init__()
        self.session_id = session_id
        self.status = status


class SessionrefApp(OpeningApp):
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
        Binding("ctrl+n", "new_session", "New"),
        Binding("ctrl+o", "switch_session", "Switch"),
        Binding("ctrl+r", "rename", "Rename"),
        Binding("ctrl+l", "compact", "Compact"),
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
    ) -> None:
        super().__init__(workspace, open_workspace)
        self.now_ms: Clock = clock or system_clock
        self.current_session_id: str | None = None
        self._initial_session_id = session_id
        self._owns_workspace = owns_workspace
        self._show_inspector = show_inspector
        self._cursor_blink = cursor_blink
        self._agent: Agent | DraftSession | None = None
        self._last_seq: int = -1
        self._titles_shown: dict[str, str | None] = {}
        self._submit_signal: AbortSignal | None = None
        self._activity = ""
        self._unsubscribe_store: Callable[[], None] | None = None
        self._unsubscribe_status: Callable[[], None] | None = None
        self._main_screen: Screen[Any] | None = None

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        with Horizontal(id="body"):
            if self._workspace is None:
                yield StoreLoading(id="store-loading")
            yield Sidebar(id="sidebar")
            with Vertical(id="chat"):
                yield Transcript(id="transcript")
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
        """Subscribe to the store and show the first session (the workspace is open)."""
        store = self.workspace.store
        self._unsubscribe_store = store.subscribe(self._store_listener)
        if self._initial_session_id is not None:
            self._open_agent(self.workspace.agent(self._initial_session_id))
        else:
            self._open_agent(self.workspace.draft_session())
        self.mark_ready()

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
        if self._unsubscribe_status is not None:
            self._unsubscribe_status()
        if self._unsubscribe_store is not None:
            self._unsubscribe_store()
        if self._owns_workspace and self._workspace is not None:
            await self._workspace.close()

    # ------------------------------------------------------------ the session

    @property
    def agent(self) -> Any:
        """The agent of the session on screen, or its `DraftSession` until its first message is sent."""
        return self._agent

    @property
    def is_draft(self) -> bool:
        """Whether the session on screen does not exist yet (its first message creates it)."""
        return isinstance(self._agent, DraftSession)

    def open_session(self, session_id: str) -> None:
        """Show `session_id` (its agent is created on first use and cached by the workspace).

        A session that cannot be opened (deleted meanwhile, damaged log) leaves the current
        one on screen and says why in a notification.
        """
        if session_id == self.current_session_id:
            return
        try:
            agent = self.workspace.agent(session_id)
            self._open_agent(agent)
        except Exception as error:
            if getattr(error, "code", None) is None:
                raise
            self.notify(_error_text(error, "Could not open the session"), severity="error", markup=False)

    def _open_agent(self, agent: Agent | DraftSession) -> None:
        # Read first: if the log cannot be read, nothing on screen has changed yet.
        draft = isinstance(agent, DraftSession)
        events = [] if draft else self.workspace.store.read_log(agent.id)[1]
        self._agent = agent
        self.current_session_id = agent.id
        self._follow_status(agent)
        self._last_seq = max((event.get("seq", -1) for event in events), default=-1)
        self.query_one(Transcript).load(events)
        self.query_one(Inspector).reset(events, draft=draft)
        self.query_one(Composer).clear_error()
        self._refresh_status()
        self.refresh_sidebar()
        self._refresh_footer()

    def _follow_status(self, agent: Agent | DraftSession) -> None:
        """Listen to `agent`'s idle/running changes instead of the previous session's."""
        if self._unsubscribe_status is not None:
            self._unsubscribe_status()
            self._unsubscribe_status = None
        if isinstance(agent, Agent):
            session_id = agent.id
            self._unsubscribe_status = agent.on_status(
                lambda status: self.post_message(AgentStatusChanged(session_id, status))
            )

    def _session_created(self, agent: Agent) -> None:
        """The draft on screen was created by its first message: keep showing it, now as a real agent.

        Its log events (the message, the reply) stream in through the store subscription as for
        any session; only the agent and what depends on it change here."""
        if self.current_session_id != agent.id:
            self.refresh_sidebar()  # the user moved on while the message was prepared
            return
        self._agent = agent
        self._follow_status(agent)
        self._refresh_status()
        self.refresh_sidebar()
        self._refresh_footer()

    def _store_listener(self, session_id: str, events: list[dict[str, Any]]) -> None:
        # May run in whichever thread appended; post_message is thread-safe and keeps order.
        self.post_message(LogAppended(session_id, list(events)))

    @on(LogAppended)
    def _log_appended(self, message: LogAppended) -> None:
        title_changed = self._title_changed(message.session_id, message.events)
        if message.session_id != self.current_session_id:
            if title_changed:
                self.refresh_sidebar()
            return
        fresh = [event for event in message.events if event.get("seq", -1) > self._last_seq]
        if not fresh:
            return
        self._last_seq = max(event.get("seq", -1) for event in fresh)
        self.query_one(Transcript).apply(fresh)
        self.query_one(Inspector).add_events(fresh)
        if title_changed:
            self._refresh_status()
            self.refresh_sidebar()

    def _title_changed(self, session_id: str, events: list[dict[str, Any]]) -> bool:
        """Whether `events` changed the session's title: a rename, or the fallback title the index
        derives from a session's first direct message (which writes no title event)."""
        if not any(event.get("type") in ("session/title", "user/message") for event in events):
            return False
        title = self.workspace.store.title(session_id)
        if self._titles_shown.get(session_id, "") == title:
            return False
        self._titles_shown[session_id] = title
        return True

    @on(AgentStatusChanged)
    def _agent_status_changed(self, message: AgentStatusChanged) -> None:
        if message.session_id == self.current_session_id:
            self._refresh_status()
            self._refresh_footer()

    def _refresh_status(self) -> None:
        agent = self._agent
        if agent is None:
            return
        store = self.workspace.store
        draft = isinstance(agent, DraftSession)
        self.query_one(StatusBar).show(
            StatusInfo(
                session_id=agent.id,
                title=None if draft else store.title(agent.id),
                cwd=agent.cwd,
                agent_status="idle" if draft else agent.status,
                model_name=self.workspace.model.name,
                activity=self._activity,
                writable=draft or store.is_writable(agent.id),
                draft=draft,
            )
        )

    def _set_activity(self, activity: str) -> None:
        self._activity = activity
        self._refresh_status()
        self._refresh_footer()

    def _refresh_footer(self) -> None:
        # The footer lives on the main screen; a modal on top must not keep it stale.
        if self._main_screen is not None:
            self._main_screen.refresh_bindings()

    @work(group="sidebar", exclusive=True, exit_on_error=False)
    async def refresh_sidebar(self) -> None:
        """Reload the sidebar from the discovery index (this folder first, newest first).

        The session on screen is always listed; a draft as `NEW_SESSION_NAME`, active now."""
        store = self.workspace.store
        agent = self._agent
        current = agent.id if agent is not None else ""
        found = list(
            await store.search_candidates(
                exclude_id=current, target_cwd=self.workspace.cwd, needle="", limit=SIDEBAR_LIMIT
            )
        )
        entries = [SidebarEntry.of(record, label) for record, label in found]
        if isinstance(agent, DraftSession):
            entries.append(SidebarEntry(agent.id, None, agent.cwd, self.now_ms()))
        elif agent is not None:
            entries.append(SidebarEntry.of(store.record(current), store.title(current)))
        entries.sort(key=lambda entry: (-entry.created_at, entry.session_id))
        self.query_one(Sidebar).show_sessions(
            entries,
            cwd=self.workspace.cwd,
            current_id=self.current_session_id,
            now_ms=self.now_ms(),
            more=len(found) >= SIDEBAR_LIMIT,
        )

    @on(Sidebar.SessionSelected)
    def _sidebar_selected(self, message: Sidebar.SessionSelected) -> None:
        self.open_session(message.session_id)
        self.query_one(Composer).focus()

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
        except SessionReferenceError as error:
            composer.show_error(describe_send_error(str(error.code), error.message))
        except Exception as error:  # a store or settings failure must not take the draft with it
            code = getattr(error, "code", type(error).__name__)
            composer.show_error(describe_send_error(str(code), getattr(error, "message", str(error))))
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
            return self._submit_signal is None and isinstance(agent, Agent) and agent.status == "running"
        if action in ("rename", "compact"):
            # Not before the session exists (a draft), nor for a read-only (DSH .zstd) session;
            # one compaction at a time.
            writable = isinstance(agent, Agent) and self.workspace.store.is_writable(agent.id)
            return writable and not (action == "compact" and self._activity)
        return True

    def action_cancel(self) -> None:
        """Abort the send being prepared (the draft is kept)."""
        if self._submit_signal is not None:
            self._submit_signal.abort("cancelled by the user")

    @work(group="stop", exclusive=True, exit_on_error=False)
    async def action_stop_turn(self) -> None:
        """Stop the running reply; what streamed so far stays in the log."""
        if isinstance(self._agent, Agent) and self._agent.status == "running":
            await self._agent.cancel()

    def action_new_session(self) -> None:
        """Show a new session in the launch folder; it is created on disk by its first message."""
        self._open_agent(self.workspace.draft_session())
        self.query_one(Composer).focus()

    def action_switch_session(self) -> None:
        """Open the session switcher (search by title, id or folder)."""
        if not CommandPalette.is_open(self):
            self.push_screen(
                CommandPalette(providers=[SessionSwitcher], placeholder="Switch to session…", id="--switcher")
            )

    def action_rename(self) -> None:
        """Ask for a new title for the current session."""
        if not isinstance(self._agent, Agent) or isinstance(self.screen, RenameScreen):
            return
        session_id = self._agent.id
        current = self.workspace.store.title(session_id) or ""

        def renamed(title: str | None) -> None:
            if title:
                self._rename(session_id, title)

        self.push_screen(RenameScreen(current), renamed)

    def _rename(self, session_id: str, title: str) -> None:
        try:
            self.workspace.store.rename(session_id, title)
        except Exception as error:
            self.notify(_error_text(error, "Could not rename the session"), severity="error", markup=False)

    @work(group="compact", exclusive=True, exit_on_error=False)
    async def action_compact(self) -> None:
        """Summarise the current conversation into a compaction checkpoint."""
        if not isinstance(self._agent, Agent):
            return
        self._set_activity("compacting…")
        try:
            await self._agent.compact()
        except Exception as error:
            self.notify(_error_text(error, "Could not compact the session"), severity="error", markup=False)
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


def _error_text(error: BaseException, headline: str) -> str:
    """`headline: message (CODE)` for coded errors, plain `headline: text` otherwise."""
    code = getattr(error, "code", None)
    message = getattr(error, "message", None) or str(error)
    return inert(f"{headline}: {message}" + (f" ({code})" if code else ""))
