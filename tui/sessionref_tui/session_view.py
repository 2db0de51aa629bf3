"""`SessionView`: the base of the chat app that keeps the session on screen in step with the workspace.

It shows one session (an `Agent`, or a `DraftSession` until its first message creates it): the
transcript, queued messages, inspector, status bar and sidebar follow the store's log events,
the agent's idle/running changes and the workspace's queue; messages that come back as drafts go
into the composer, or wait for their session if it is not on screen (`returned_drafts`). The
subclass (`SessionrefApp`) lays the widgets out and adds the keys and actions.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

from sessionref.contract.errors import CodedError, InternalErrorLog, describe_error
from textual import on, work
from textual.message import Message
from textual.screen import Screen

from sessionref_tui.display import NEW_SESSION_NAME, inert
from sessionref_tui.opening import OpeningApp
from sessionref_tui.returned_drafts import KeptDrafts, kept_notice, restored_notice, returned_notice
from sessionref_tui.store_loading import WorkspaceOpener
from sessionref_tui.widgets.composer import Composer
from sessionref_tui.widgets.inspector import Inspector
from sessionref_tui.widgets.queued import QueuedMessages
from sessionref_tui.widgets.sidebar import Sidebar, SidebarEntry
from sessionref_tui.widgets.status_bar import StatusBar, StatusInfo
from sessionref_tui.widgets.transcript import Transcript

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


class SessionView(OpeningApp):
    """Keeps the widgets of the session on screen current (see the module docstring).

    Subclasses compose a `Sidebar`, `Transcript`, `QueuedMessages`, `Composer`, `Inspector` and
    `StatusBar`, set `_main_screen` when mounted, call `follow_workspace` once the workspace is
    open and then `_open_agent` for the first session.
    """

    def __init__(
        self,
        workspace: Workspace | None,
        open_workspace: WorkspaceOpener | None,
        *,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(workspace, open_workspace)
        self.now_ms: Clock = clock or system_clock
        self.current_session_id: str | None = None
        self._agent: Agent | DraftSession | None = None
        self._last_seq: int = -1
        self._titles_shown: dict[str, str | None] = {}
        self._activity = ""
        self._unsubscribe: list[Callable[[], None]] = []
        self._unsubscribe_status: Callable[[], None] | None = None
        self._kept_drafts = KeptDrafts()
        self._main_screen: Screen[Any] | None = None
        self.home_dir: str | None = str(Path.home())
        """Shown as `~` where a folder is named (tests set a fixed one)."""

    def follow_workspace(self) -> None:
        """Subscribe to the store's log events and the workspace's queue and returned drafts."""
        workspace = self.workspace
        self._unsubscribe = [
            workspace.store.subscribe(self._store_listener),
            workspace.on_queue_change(lambda session_id: self.post_message(QueueChanged(session_id))),
            workspace.on_drafts_returned(
                lambda session_id, drafts: self.post_message(DraftsReturned(session_id, list(drafts)))
            ),
        ]

    def stop_following(self) -> None:
        """Drop every subscription (the app is closing)."""
        if self._unsubscribe_status is not None:
            self._unsubscribe_status()
            self._unsubscribe_status = None
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = []

    @property
    def agent(self) -> Any:
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
            report = self.workspace.store.read_log_report(agent.id)
            events, skipped = report.events, report.skipped_lines
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
        title = self.workspace.store.title(session_id)
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
        name = inert(self.workspace.store.title(message.session_id) or NEW_SESSION_NAME)
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
        store = self.workspace.store
        draft = is_draft_session(agent)
        self.query_one(StatusBar).show(
            StatusInfo(
                session_id=agent.id,
                title=None if draft else store.title(agent.id),
                cwd=agent.cwd,
                agent_status="idle" if draft else agent.status,
                model_name=self.workspace.model.name,
                activity=self._activity,
                writable=draft or agent.writable,
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
        """Reload the sidebar from the discovery index: the current session's folder first (as the
        picker ranks), then newest first. The session on screen is always listed; a draft as
        `NEW_SESSION_NAME`, active now."""
        workspace = self.workspace
        store = workspace.store
        agent = self._agent
        here = agent.cwd if agent is not None else workspace.cwd
        limit = workspace.limits.sidebar
        found = await workspace.candidates(agent, "", limit)
        entries = [SidebarEntry.of_candidate(candidate) for candidate in found]
        if is_draft_session(agent):
            entries.append(SidebarEntry(agent.id, None, agent.cwd, self.now_ms()))
        elif agent is not None:
            entries.append(SidebarEntry.of(store.record(agent.id), store.title(agent.id)))
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


def error_text(error: BaseException, headline: str, log: InternalErrorLog | None = None) -> str:
    """`headline: message (CODE)`, inert, for any error (`describe_error`; `log` keeps a bug's traceback)."""
    code, message = describe_error(error, log)
    return inert(f"{headline}: {message} ({code})")
