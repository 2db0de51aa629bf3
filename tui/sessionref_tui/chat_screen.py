"""`ChatScreen`: the chat on screen, kept in step with the workspace.

It shows one session (an `Agent`, or a `DraftSession` until its first message creates it): the
transcript, queued messages, inspector, status bar and sidebar follow the store's log events (through
`Workspace.on_log_appended`), the agent's idle/running changes and the workspace's queue; messages that
come back as drafts go into the composer, or wait for their session if it is not on screen
(`returned_drafts`). Every listener posts a `Message` to the screen, so the widgets change on the event
loop only. Its keys and actions (send, new, switch, rename, compact, stop, the toggles) are the chat's.

While the app opens the workspace (`SessionrefApp`), a `StoreLoading` placeholder stands where the
sidebar goes and a draft can be typed; `show_workspace` swaps the placeholder for the sidebar and
shows the first session, then the screen posts `ChatScreen.Ready`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeGuard

from rich.console import RenderableType
from sessionref.contract.errors import CodedError, InternalErrorLog, describe_error
from sessionref.service.abort import AbortSignal
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.command import CommandPalette
from textual.containers import Horizontal, Vertical
from textual.events import Resize
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer

from sessionref_tui.display import inert
from sessionref_tui.mentions import MentionTarget, mention_for
from sessionref_tui.palette import SessionSwitcher
from sessionref_tui.returned_drafts import KeptDrafts, kept_notice, restored_notice, returned_notice
from sessionref_tui.screens.confirm_compact import ConfirmCompactScreen
from sessionref_tui.screens.rename import RenameScreen
from sessionref_tui.source_marks import untitled_name
from sessionref_tui.store_loading import IndexProgressed, StoreLoading
from sessionref_tui.submit_errors import describe_send_error
from sessionref_tui.widgets.composer import Composer
from sessionref_tui.widgets.inspector import Inspector
from sessionref_tui.widgets.mention_popup import MentionPopup
from sessionref_tui.widgets.queued import QueuedMessages
from sessionref_tui.widgets.sidebar import Sidebar, SidebarEntry
from sessionref_tui.widgets.status_bar import StatusBar, StatusInfo
from sessionref_tui.widgets.transcript import NewBelowCue, Transcript

if TYPE_CHECKING:
    from sessionref.agent import Agent, TurnFailure
    from sessionref.host.workspace import DraftSession, ReturnedDraft, Workspace

Clock = Callable[[], int]
"""Returns "now" in milliseconds since the epoch (injected in tests so ages are stable)."""


def system_clock() -> int:
    """The wall clock in milliseconds."""
    return int(time.time() * 1000)


# The agent and the workspace layers are imported where they are first needed, not when this module
# loads: `sessionref chat` paints its first frame before it opens the workspace (in a thread, which
# imports them), and these imports are most of what a cold start would otherwise wait for.


def is_agent(target: object) -> TypeGuard[Agent]:
    """Whether `target` is an existing session's `Agent` (not a `DraftSession`, not None)."""
    if target is None:
        return False
    from sessionref.agent import Agent

    return isinstance(target, Agent)


def is_draft_session(target: object) -> TypeGuard[DraftSession]:
    """Whether `target` is a `DraftSession`: a session its first message will create."""
    if target is None:
        return False
    from sessionref.host.workspace import DraftSession

    return isinstance(target, DraftSession)


class LogAppended(Message):
    """The store appended `events` to `session_id` (posted from the store's listener)."""

    def __init__(self, session_id: str, events: list[dict[str, Any]]) -> None:
        super().__init__()
        self.session_id = session_id
        self.events = events


class QueueChanged(Message):
    """The messages waiting in `session_id`'s inbox changed (posted from the workspace's listener)."""

    def __init__(self, session_id: str) -> None:
        super().__init__()
        self.session_id = session_id


class DraftsReturned(Message):
    """Sent messages of `session_id` will never reach the model and come back as drafts."""

    def __init__(self, session_id: str, drafts: list[ReturnedDraft]) -> None:
        super().__init__()
        self.session_id = session_id
        self.drafts = drafts


class AgentStatusChanged(Message):
    """The current agent went idle or started running."""

    def __init__(self, session_id: str, status: str) -> None:
        super().__init__()
        self.session_id = session_id
        self.status = status


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
        "explain_read_only",
    )
)
"""Actions unavailable until the workspace is open (the sidebar is a placeholder until then)."""


MENTION_IN_NEW_SESSION = "ctrl+f"
"""Read-only sessions (DSH's, compressed logs) cannot be written: this key continues in a new session
that mentions the one on screen, with the draft (the refusal names it; the footer shows it then)."""

REHEARSAL_LIMIT = 0.5
"""Seconds after which an unseen rehearsal of the picker ends even if no frame laid it out (a
safety net: frames are not written to the terminal while it lasts; it normally takes one frame)."""

SIDEBAR_MIN_WIDTH = 90
"""Below this many columns the sidebar hides itself (`SessionrefApp.HORIZONTAL_BREAKPOINTS`, app.tcss);
Ctrl+G brings it back."""

COMPACT_KEY = "f8"
"""Compaction asks first and is rare: it is in the palette and on a key nobody presses by reflex.

Ctrl+L, where it used to be, is what terminal users press to redraw the screen, and now does that."""


class ChatScreen(Screen[None]):
    """Chat with `@` session mentions over one `Workspace` (see the module docstring).

    `session_id` opens that session; otherwise the screen starts on a new session in the
    workspace's cwd that is created on disk by its first message (a `DraftSession`: launching
    the app and leaving it writes nothing). `clock` feeds the relative ages; `cursor_blink=False`
    keeps snapshots stable. Without a `workspace`, the screen waits for `show_workspace`.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "app.quit", "Quit", priority=True),
        Binding("ctrl+n", "new_session", "New"),
        Binding("ctrl+o", "switch_session", "Switch"),
        Binding("ctrl+r", "rename", "Rename"),
        Binding("ctrl+r", "explain_read_only('renamed')", show=False),
        Binding("ctrl+l", "redraw", "Redraw", show=False),
        Binding(COMPACT_KEY, "compact", "Compact"),
        Binding(COMPACT_KEY, "explain_read_only('compacted')", show=False),
        Binding(MENTION_IN_NEW_SESSION, "mention_in_new_session", "New session mentioning it"),
        Binding("ctrl+t", "toggle_inspector", "Inspector"),
        Binding("ctrl+g", "toggle_sidebar", "Sidebar"),
        Binding("escape", "cancel", "Cancel send"),
        Binding("escape", "stop_turn", "Stop reply"),
    ]

    class Ready(Message):
        """The workspace is open and the first session is on screen."""

    def __init__(
        self,
        workspace: Workspace | None = None,
        *,
        session_id: str | None = None,
        clock: Clock | None = None,
        show_inspector: bool = False,
        cursor_blink: bool = True,
        rehearse_picker: bool = True,
    ) -> None:
        super().__init__()
        self._workspace = workspace
        self.now_ms: Clock = clock or system_clock
        self.rehearse_picker = rehearse_picker
        """Open the `@` picker once, unseen, after the first session is drawn (`_rehearse_picker`), and
        prepare the first lookups meanwhile (`_prepare_lookups`)."""
        self.home_dir: str | None = str(Path.home())
        """Shown as `~` where a folder is named (tests set a fixed one)."""
        self.current_session_id: str | None = None
        self._ready = asyncio.Event()
        self.first_session_id = session_id
        """The session shown once the workspace is open (None: a new one)."""
        self._show_inspector = show_inspector
        self._cursor_blink = cursor_blink
        self._agent: Agent | DraftSession | None = None
        self._last_seq: int = -1
        self._titles_shown: dict[str, str | None] = {}
        self._activity = ""
        self._unsubscribe: list[Callable[[], None]] = []
        self._unsubscribe_status: Callable[[], None] | None = None
        self._kept_drafts = KeptDrafts()
        self._typed_drafts: dict[str, str] = {}
        """What was typed in each session's composer, by session id, while another session is shown."""
        self._submit_signal: AbortSignal | None = None
        self._rehearsed: MentionPopup | None = None
        """The picker while it is rehearsed: frames drawn meanwhile are not written to the terminal."""

    @property
    def workspace(self) -> Workspace:
        """The open workspace (RuntimeError while it is still being opened: see `workspace_ready`)."""
        if self._workspace is None:
            raise RuntimeError("the workspace is still being opened")
        return self._workspace

    @property
    def workspace_ready(self) -> bool:
        """Whether the workspace is open and the first session is on screen."""
        return self._ready.is_set()

    @property
    def ready_event(self) -> asyncio.Event:
        """Set once the workspace is open and shown (what waiting lookups wait for)."""
        return self._ready

    def compose(self) -> ComposeResult:
        # A light module (its heavy imports are types only): the `@` lookups wait for the workspace.
        from sessionref.host.mention_source import MentionSource

        with Horizontal(id="body"):
            if self._workspace is None:
                yield StoreLoading(id="store-loading")
            yield Sidebar(id="sidebar")
            with Vertical(id="chat"):
                yield Transcript(id="transcript")
                yield NewBelowCue(id="new-below")
                yield QueuedMessages(id="queued")
                yield Composer(
                    MentionSource(lambda: self.workspace, lambda: self.agent, ready=self._ready),
                    now_ms=self.now_ms,
                    cursor_blink=self._cursor_blink,
                    id="composer",
                )
            yield Inspector(id="inspector")
        yield StatusBar(id="status-bar")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#inspector").display = self._show_inspector
        self.query_one(NewBelowCue).display = False
        self.query_one("#body").set_class(self._show_inspector, "-inspecting")
        composer = self.query_one(Composer)
        if self._workspace is not None:
            self._start()
        else:
            self.query_one(Sidebar).add_class("-opening")
            composer.set_busy(True, "Opening sessions…")
        composer.focus()

    def _start(self) -> None:
        """Follow the workspace and show the first session (the workspace is open)."""
        self.follow_workspace()
        if self.first_session_id is not None:
            self._open_agent(self.workspace.agent(self.first_session_id))
        else:
            self._open_agent(self.workspace.draft_session())
        self._ready.set()
        self.post_message(self.Ready())
        if self.rehearse_picker:
            self.call_after_refresh(self._rehearse_picker)
            self.call_after_refresh(self._prepare_lookups)

    @work(group="lookup-preparation", exit_on_error=False)
    async def _prepare_lookups(self) -> None:
        """Have the workspace make ready, in a thread, what the first `@` query without an exact
        title match would otherwise compute while the user waits (`MentionSource.prepare`)."""
        source = self.query_one(Composer).source
        if source is not None:
            await source.prepare()

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
        if not self.is_current:
            return  # a modal opened meanwhile: the picker would not be laid out under it
        self._rehearsed = composer.popup
        self._rehearsed.rehearse(candidates)
        self.set_timer(REHEARSAL_LIMIT, self._end_picker_rehearsal)  # in case no frame sizes the popup

    def _end_picker_rehearsal(self) -> None:
        popup, self._rehearsed = self._rehearsed, None
        if popup is None:
            return
        popup.end_rehearsal()
        self.refresh()  # the next frame is written whole: the terminal never saw the unseen ones

    def write_frame(self, screen: Screen[Any], renderable: RenderableType | None) -> bool:
        """Whether a frame goes to the terminal: not while the picker is rehearsed; the rehearsal ends
        after the first frame that laid the picker out (or one of another screen)."""
        popup = self._rehearsed
        if popup is None:
            return True
        if renderable is not None and (popup.size or screen is not self):
            self.call_later(self._end_picker_rehearsal)
        return False

    def show_workspace(self, workspace: Workspace) -> None:
        """The workspace is open: the sidebar replaces its placeholder, the composer can send."""
        self._workspace = workspace
        for loading in self.query(StoreLoading):
            loading.remove()
        self.query_one(Sidebar).remove_class("-opening")
        self.query_one(Composer).set_busy(False)
        self._start()

    def show_caught_up(self) -> None:
        """The store caught up with logs changed elsewhere: titles and new sessions are current."""
        self._refresh_status()
        self.refresh_sidebar()

    # ------------------------------------------------------------------ submit

    @on(Composer.Submitted)
    def _composer_submitted(self, message: Composer.Submitted) -> None:
        message.stop()
        if not message.value.strip() or self._submit_signal is not None or not self.workspace_ready:
            return
        self._submit_signal = AbortSignal()
        self.query_one(Transcript).follow()  # the message and its reply come into view
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
            if self._typed_drafts.get(target.id) == value:
                del self._typed_drafts[target.id]  # sent after the user moved on: no longer a draft
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
        if action in ("mention_in_new_session", "explain_read_only"):
            return is_agent(agent) and not agent.writable
        if action == "clear_draft":
            return bool(self.query_one(Composer).value)
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
        from sessionref.service.candidates import label_from_title  # with the workspace (see is_agent)

        agent = self._agent
        if not is_agent(agent):
            return
        label = inert(label_from_title(agent.id, self.workspace.title(agent.id)))
        chip = mention_for(MentionTarget(agent.id, label))
        composer = self.query_one(Composer)
        typed = composer.value
        composer.value = ""  # the draft moves to the new session instead of staying with this one
        self._open_agent(self.workspace.draft_session())
        composer.value = f"{chip} {typed.lstrip()}" if typed.strip() else f"{chip} "
        composer.focus()
        self.notify(f"New session mentioning “{label}”: send to continue from it.", markup=False)

    def action_switch_session(self) -> None:
        """Open the session switcher (search by title, id or folder)."""
        if not CommandPalette.is_open(self.app):
            self.app.push_screen(
                CommandPalette(providers=[SessionSwitcher], placeholder="Switch to session…", id="--switcher")
            )

    def action_rename(self) -> None:
        """Ask for a new title for the current session."""
        if not is_agent(self._agent) or isinstance(self.app.screen, RenameScreen):
            return
        session_id = self._agent.id
        current = self.workspace.title(session_id) or ""

        def renamed(title: str | None) -> None:
            if title:
                self._rename(session_id, title)

        self.app.push_screen(RenameScreen(current), renamed)

    @work(group="rename", exit_on_error=False)
    async def _rename(self, session_id: str, title: str) -> None:
        try:
            await self.workspace.rename(session_id, title)  # written off the UI loop
        except Exception as error:
            text = error_text(error, "Could not rename the session", self.workspace.error_log)
            self.notify(text, severity="error", markup=False)

    def action_explain_read_only(self, verb: str) -> None:
        """A key that changes the session was pressed on a read-only one: say why nothing happens."""
        self.notify(
            f"This session is read-only: it cannot be {verb}. "
            "Ctrl+F continues in a new session mentioning it.",
            markup=False,
        )

    def action_clear_draft(self) -> None:
        """Empty the composer (an edit like any other: Ctrl+Z in the composer brings it back)."""
        composer = self.query_one(Composer)
        composer.input.clear_draft()
        composer.focus()

    def action_redraw(self) -> None:
        """Paint the whole screen again (Ctrl+L): what another program wrote over it goes away."""
        self.refresh()

    def action_compact(self) -> None:
        """Ask (a modal saying what compaction does), then compact the session on screen."""
        agent = self._agent
        if not is_agent(agent) or isinstance(self.app.screen, ConfirmCompactScreen):
            return
        name = self.workspace.title(agent.id) or untitled_name(agent.id)

        def answered(confirmed: bool | None) -> None:
            if confirmed:
                self._compact(agent)

        self.app.push_screen(ConfirmCompactScreen(name), answered)

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
        """Show or hide the sessions sidebar. Below `SIDEBAR_MIN_WIDTH` columns (or beside the
        inspector on a medium screen) it hides itself; this brings it back, and the user's choice
        then holds at any width (classes, not an inline style, so the width rules still apply)."""
        sidebar = self.query_one(Sidebar)
        shown = sidebar.display
        sidebar.set_class(not shown, "-shown")
        sidebar.set_class(shown, "-hidden")

    def follow_workspace(self) -> None:
        """Subscribe to the store's log events and the workspace's queue and returned drafts."""
        workspace = self.workspace
        self._unsubscribe = [
            workspace.on_log_appended(self._store_listener),
            workspace.on_queue_change(lambda session_id: self.post_message(QueueChanged(session_id))),
            workspace.on_drafts_returned(
                lambda session_id, drafts: self.post_message(DraftsReturned(session_id, list(drafts)))
            ),
        ]

    def on_unmount(self) -> None:
        self.stop_following()

    def stop_following(self) -> None:
        """Drop every subscription (the app is closing)."""
        if self._unsubscribe_status is not None:
            self._unsubscribe_status()
            self._unsubscribe_status = None
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = []

    @property
    def agent(self) -> Agent | DraftSession | None:
        """The agent of the session on screen, or its `DraftSession` until its first message is sent."""
        return self._agent

    @property
    def is_draft(self) -> bool:
        """Whether the session on screen does not exist yet (its first message creates it)."""
        return is_draft_session(self._agent)

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
            if not isinstance(error, CodedError):
                raise
            self.notify(error_text(error, "Could not open the session"), severity="error", markup=False)

    def _open_agent(self, agent: Agent | DraftSession) -> None:
        # Read first: if the log cannot be read, nothing on screen has changed yet.
        draft = is_draft_session(agent)
        events: list[dict[str, Any]] = []
        skipped: tuple[int, ...] = ()
        if not draft:
            report = self.workspace.read_log(agent.id)
            events, skipped = report.events, report.skipped_lines
        self._swap_typed_draft(self.current_session_id, agent.id)
        self._agent = agent
        self.current_session_id = agent.id
        self._follow_status(agent)
        self._last_seq = max((event.get("seq", -1) for event in events), default=-1)
        self.query_one(Transcript).load(events, skipped_lines=skipped)
        self.query_one(QueuedMessages).show(self.workspace.queued(agent))
        self.query_one(Inspector).reset(events, draft=draft, skipped_lines=skipped)
        self._restore_kept_drafts(agent.id)
        self.query_one(Composer).clear_error()
        self._refresh_status()
        self.refresh_sidebar()
        self._refresh_footer()

    def _swap_typed_draft(self, leaving: str | None, opening: str) -> None:
        """Keep what was typed for the session being left; show what was typed for the one opened
        (chips included: the canonical text is kept). Before the first session, the draft typed
        while the workspace opened belongs to it."""
        if leaving is None or leaving == opening:
            return
        composer = self.query_one(Composer)
        typed = composer.value
        if typed.strip():
            self._typed_drafts[leaving] = typed
        else:
            self._typed_drafts.pop(leaving, None)
        composer.value = self._typed_drafts.pop(opening, "")

    def typed_draft(self, session_id: str) -> str | None:
        """What was typed in `session_id`'s composer and kept while another session is shown."""
        return self._typed_drafts.get(session_id)

    def _follow_status(self, agent: Agent | DraftSession) -> None:
        """Listen to `agent`'s idle/running changes instead of the previous session's."""
        if self._unsubscribe_status is not None:
            self._unsubscribe_status()
            self._unsubscribe_status = None
        if is_agent(agent):
            session_id = agent.id
            removers = [
                agent.on_status(lambda status: self.post_message(AgentStatusChanged(session_id, status))),
                agent.on_turn_error(self._turn_failed),
            ]

            def unsubscribe() -> None:
                for remove in removers:
                    remove()

            self._unsubscribe_status = unsubscribe

    def _turn_failed(self, failure: TurnFailure) -> None:
        # A failure the log recorded shows as the turn's end in the transcript; this one only exists here.
        if not failure.logged:
            text = f"The reply stopped and the log could not record it: {failure.message} ({failure.code})"
            self.notify(inert(text), severity="error", markup=False)

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
        title = self.workspace.title(session_id)
        if self._titles_shown.get(session_id, "") == title:
            return False
        self._titles_shown[session_id] = title
        return True

    @on(QueueChanged)
    def _queue_changed(self, message: QueueChanged) -> None:
        if message.session_id == self.current_session_id:
            self.query_one(QueuedMessages).show(self.workspace.queued(self._agent))
            self._refresh_footer()

    @on(DraftsReturned)
    def _drafts_returned(self, message: DraftsReturned) -> None:
        """Returned drafts go back into the composer, or are kept for their session if it is not shown."""
        if not message.drafts:
            return
        if message.session_id == self.current_session_id:
            self._put_back(message.drafts)
            self.notify(returned_notice(message.drafts), title="Not sent", markup=False)
            return
        self._kept_drafts.keep(message.session_id, message.drafts)
        name = inert(self.workspace.title(message.session_id) or untitled_name(message.session_id))
        self.notify(kept_notice(message.drafts, name), title="Not sent", markup=False)

    def _restore_kept_drafts(self, session_id: str) -> None:
        drafts = self._kept_drafts.take(session_id)
        if drafts:
            self._put_back(drafts)
            self.notify(restored_notice(drafts), title="Not sent", markup=False)

    def _put_back(self, drafts: list[ReturnedDraft]) -> None:
        from sessionref.host.workspace import merge_returned_drafts

        composer = self.query_one(Composer)
        composer.value = merge_returned_drafts([draft.draft for draft in drafts], composer.value)
        composer.focus()

    @on(AgentStatusChanged)
    def _agent_status_changed(self, message: AgentStatusChanged) -> None:
        if message.session_id == self.current_session_id:
            self._refresh_status()
            self._refresh_footer()

    def _refresh_status(self) -> None:
        agent = self._agent
        if agent is None:
            return
        if is_agent(agent):
            title, status, writable = self.workspace.title(agent.id), agent.status, agent.writable
        else:
            title, status, writable = None, "idle", True
        self.query_one(StatusBar).show(
            StatusInfo(
                session_id=agent.id,
                title=title,
                cwd=agent.cwd,
                agent_status=status,
                model_name=self.workspace.model.name,
                activity=self._activity,
                writable=writable,
                draft=not is_agent(agent),
            )
        )

    def _set_activity(self, activity: str) -> None:
        self._activity = activity
        self._refresh_status()
        self._refresh_footer()

    def _refresh_footer(self) -> None:
        # The footer lives on this screen; a modal on top must not keep it stale.
        self.refresh_bindings()

    @work(group="sidebar", exclusive=True, exit_on_error=False)
    async def refresh_sidebar(self) -> None:
        """Reload the sidebar from the discovery index: the current session's folder first (as the
        picker ranks), then newest first. The session on screen is always listed; a draft as
        `NEW_SESSION_NAME`, active now."""
        workspace = self.workspace
        agent = self._agent
        here = agent.cwd if agent is not None else workspace.cwd
        limit = workspace.limits.sidebar
        found = await workspace.candidates(agent, "", limit)
        entries = [
            SidebarEntry.of_candidate(candidate, workspace.machine_of(candidate.session_id))
            for candidate in found
        ]
        if is_draft_session(agent):
            entries.append(SidebarEntry(agent.id, None, agent.cwd, self.now_ms()))
        elif agent is not None:
            entries.append(SidebarEntry.of(workspace.record(agent.id), workspace.title(agent.id)))
        entries.sort(key=lambda entry: (-entry.last_activity, entry.session_id))
        self.query_one(Sidebar).show_sessions(
            entries,
            cwd=here,
            current_id=self.current_session_id,
            now_ms=self.now_ms(),
            more=len(found) >= limit,
            home=self.home_dir,
        )

    @on(Sidebar.SessionSelected)
    def _sidebar_selected(self, message: Sidebar.SessionSelected) -> None:
        self.open_session(message.session_id)
        self.query_one(Composer).focus()

    def on_resize(self, event: Resize) -> None:
        """Below `SIDEBAR_MIN_WIDTH` columns the footer is compact (less space between keys) and leaves
        Ctrl+J to the composer's placeholder and Ctrl+P to the welcome text, so the keys that apply
        fit an 80-column terminal (both keys still work)."""
        narrow = event.size.width < SIDEBAR_MIN_WIDTH
        footer = self.query_one(Footer)
        footer.compact = narrow
        footer.show_command_palette = not narrow
        self.query_one(Composer).newline_key_in_footer = not narrow
        self.refresh_bindings()

    @on(Transcript.UnseenBelow)
    def _unseen_below(self, message: Transcript.UnseenBelow) -> None:
        self.query_one(NewBelowCue).display = message.unseen

    @on(NewBelowCue.Clicked)
    def _new_below_clicked(self) -> None:
        self.query_one(Transcript).follow()

    @on(IndexProgressed)
    def _index_progressed(self, message: IndexProgressed) -> None:
        for loading in self.query(StoreLoading):
            loading.show_progress(message.done, message.total)


def error_text(error: BaseException, headline: str, log: InternalErrorLog | None = None) -> str:
    """`headline: message (CODE)`, inert, for any error (`describe_error`; `log` keeps a bug's traceback)."""
    code, message = describe_error(error, log)
    return inert(f"{headline}: {message} ({code})")
