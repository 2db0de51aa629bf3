"""One place that wires the store, the model, the reference service and the agents together.

The Textual app and the line mode both submit through :meth:`Workspace.submit`, so a message
typed in either is parsed, prepared and delivered the same way, and both follow the same policy
for what happens around a send:

* **Sessions are created by their first message.** A UI starts on a :class:`DraftSession` (an id
  and a cwd, nothing on disk); ``submit`` creates the session only once the message has been
  prepared, so launching an app, or asking for a new session and leaving it, leaves no empty
  session behind.
* **Queued messages are visible and never lost.** A message sent while a reply runs waits in the
  agent's inbox until the next step boundary; :meth:`Workspace.queued` lists those (direct
  messages only, never their snapshots). :meth:`Workspace.stop` stops the reply and hands every
  queued message back: it is discarded from the inbox with its snapshot, and its draft (the text
  as typed, mention tokens included) goes to the ``on_drafts_returned`` listeners so the UI puts it
  back into the composer. A message the agent drops for any other reason comes back the same way.
  Those listeners are the only way a UI learns a message was not delivered: neither UI reads a
  delivery ticket's outcome.
* **Every list of sessions is asked for the same way, with a named size.** Both UIs list sessions
  (the ``@`` menus, the sidebar, the session switcher, ``/sessions``) through :meth:`Workspace.candidates`,
  the reference service's ranking (this folder first, then most recent), with a limit from
  :class:`CandidateLimits`, where each number says why it is that number.

The values of that policy (`DraftSession`, `CandidateLimits`, `QueuedMessage`, `ReturnedDraft`,
…) are in `ui_policy` and re-exported here.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sessionref.agent import Agent, AgentError, DeliveryTicket, deliver_with_references
from sessionref.agent.errors import AGENT_EMPTY_MESSAGE
from sessionref.contract.options import Placement
from sessionref.host.frecency import SHORT_QUERY_CHARS, Frecency
from sessionref.host.internal_errors import StoreInternalErrorLog
from sessionref.host.live_discovery import LiveDiscovery
from sessionref.host.mention_source import MentionSource, MentionTarget
from sessionref.host.ports import ChatModel, WorkspaceStore
from sessionref.host.settings import Settings
from sessionref.host.ui_policy import (
    CandidateLimits,
    DraftSession,
    DraftsListener,
    QueuedMessage,
    QueueListener,
    ReturnedDraft,
    Vantage,
    merge_returned_drafts,
)
from sessionref.service.abort import AbortSignal
from sessionref.service.candidates import Candidate
from sessionref.service.fuzzy_titles import prepare_titles
from sessionref.service.protocols import Progress, SessionRecord
from sessionref.service.references import PreparedReferencedMessage, SessionReferences
from sessionref.store.foreign_links import linked_files
from sessionref.store.logfile import LogReport
from sessionref.store.spill_files import DirectorySpillStore
from sessionref.textsearch.store_index import StoreConversationIndex

if TYPE_CHECKING:
    from sessionref.host.catalog_link import CatalogLink
    from sessionref.host.catalog_publishing import BackgroundPublishing, NoteListener

FRECENT_REACH = 200
"""Sessions past a short query's limit it still reaches for (in the contract's order), so that
frecent ones among them can come first: one indexed lookup of 250 costs about a millisecond at
100,000 sessions (the 50 of `CandidateLimits.mention` take 0.2 ms)."""


def _now_ms() -> float:
    return time.time() * 1000


__all__ = [
    "CandidateLimits",
    "DraftSession",
    "DraftsListener",
    "QueueListener",
    "QueuedMessage",
    "ReturnedDraft",
    "SubmitResult",
    "Vantage",
    "Workspace",
    "merge_returned_drafts",
]


LogListener = Callable[[str, list[dict[str, Any]]], None]
"""Called with a session id and the events just appended to its log."""


@dataclass(frozen=True, slots=True)
class SubmitResult:
    """A submitted message: the agent it went to, its ticket, what was prepared, the referenced labels.

    ``created`` is True when this message created its session (the target was a `DraftSession`).
    """

    agent: Agent
    ticket: DeliveryTicket
    prepared: PreparedReferencedMessage
    references: tuple[str, ...]
    created: bool = False


@dataclass(slots=True)
class _InFlight:
    queued: QueuedMessage
    ticket: DeliveryTicket


class Workspace:
    """The store, the active model, the reference service and one cached Agent per session.

    ``cwd`` is where new sessions are created (and which sessions rank first as candidates).
    ``settings`` supplies the snapshot placement and the reference configuration; without it
    the defaults apply (placement ``before``, automatic budget from the model's context window).
    ``error_log`` keeps the traceback of an unexpected error a UI shows (in the store); pass it to
    ``describe_error``. ``conversations`` is the store's conversation index (what
    `mention_source` searches); a UI calls `start_conversation_search` once its sessions are on
    screen, and `close` closes it. ``catalog`` (`open_catalog_link`, None: no catalog) adds the
    shared catalog's sessions to every list and search, within its keystroke deadline.
    """

    def __init__(
        self,
        store: WorkspaceStore,
        model: ChatModel,
        *,
        cwd: str | None,
        settings: Settings | None = None,
        conversations: StoreConversationIndex | None = None,
        catalog: CatalogLink | None = None,
    ) -> None:
        self.store = store
        self.model = model
        self.cwd = cwd
        self.settings = settings
        self.placement: Placement = settings.placement if settings is not None else "before"
        self.limits = CandidateLimits()
        """How many sessions each list in the UIs shows (see `CandidateLimits`)."""
        self.catalog = catalog
        self.references = SessionReferences(
            store if catalog is None else catalog.sessions(store),
            settings.references if settings is not None else None,
            spill_store=DirectorySpillStore(store.root),
            context_window=self._context_window,
            conversations=conversations if catalog is None else catalog.conversations(conversations),
        )
        self.conversations = conversations
        """The conversation index behind the conversation search (None: that search is `off`)."""
        self.error_log = StoreInternalErrorLog(Path(store.root))
        self.frecency = Frecency.load(Path(store.root))
        """Sessions mentioned often and lately: first after the folder's for a short query."""
        self._agents: dict[str, Agent] = {}
        self._in_flight: dict[str, list[_InFlight]] = {}
        self._queue_listeners: list[QueueListener] = []
        self._drafts_listeners: list[DraftsListener] = []
        self._collecting: dict[str, list[ReturnedDraft]] | None = None
        self._live: LiveDiscovery | None = None
        self.publishing: BackgroundPublishing | None = None
        """Keeps `[catalog] publish` current while a UI runs (`start_publishing`; None: not publishing)."""
        self._stop_nudging: Callable[[], None] | None = None

    def _context_window(self) -> int | None:
        return self.model.context_window

    # -- sessions ----------------------------------------------------------------------------

    def agent(self, session_id: str) -> Agent:
        """The Agent of ``session_id`` (created on first use, then cached).

        Raises the store's error (``STORE_SESSION_NOT_FOUND``) for an unknown session.
        """
        agent = self._agents.get(session_id)
        if agent is None:
            agent = Agent(self.store, session_id, self.model, placement=self.placement)
            agent.on_entered(lambda messages: self._entered(session_id, messages))
            agent.on_discard(lambda message, reason: self._discarded(session_id, message, reason))
            self._agents[session_id] = agent
        return agent

    def draft_session(self, cwd: str | None = None) -> DraftSession:
        """A new session that is created by its first message (in ``cwd``, default this workspace's)."""
        return DraftSession(str(uuid.uuid4()), self.cwd if cwd is None else cwd)

    def new_session(self) -> Agent:
        """Create a session in this workspace's cwd now and return its Agent (hosts that seed data)."""
        record = self.store.create_session(cwd=self.cwd)
        return self.agent(record.id)

    async def candidates(
        self,
        target: Agent | DraftSession | None,
        query: str,
        limit: int | None,
        *,
        signal: AbortSignal | None = None,
    ) -> list[Candidate]:
        """Sessions matching ``query`` (title, id or folder) as seen from ``target``, best first.

        The reference service's discovery (``list_candidates``: ``target``'s folder first, then the
        most recently active, answered from the index), at most ``limit`` of them (a field of
        `limits`; None: the configured ``candidateLimit``). ``target`` itself is never listed; None
        sees from this workspace's cwd and leaves nothing out. Close title matches
        (``service.fuzzy_titles``) follow the exact ones when those do not fill the list; for a
        short query the sessions mentioned often and lately come right after the folder's
        (``host.frecency``).
        """
        wanted = self.references.config.candidate_limit if limit is None else limit
        short = len(query.strip()) <= SHORT_QUERY_CHARS and self.frecency.known > 0
        reach = wanted + FRECENT_REACH if short else wanted
        found = await self.references.list_candidates(
            self.vantage(target), query, reach, signal=signal, fuzzy=True
        )
        return self.frecency.order(found, query, int(_now_ms()))[:wanted]

    async def prepare_lookups(self, target: Agent | DraftSession | None) -> int:
        """Make ready, in a thread, what the first `@` keystroke without an exact title match would
        otherwise compute on the spot (the matching keys of the titles `candidates` scores for close
        matches, `fuzzy_titles.prepare_titles`); returns how many titles. Called once the first
        session is shown; titles that appear later are prepared by the lookup that meets them."""
        labels = await self.references.close_match_labels(self.vantage(target))
        await asyncio.to_thread(prepare_titles, labels)
        return len(labels)

    def vantage(self, target: Agent | DraftSession | None) -> Agent | DraftSession | Vantage:
        """Where a lookup is seen from: ``target``, else this workspace's cwd leaving nothing out."""
        return Vantage("", self.cwd) if target is None else target

    def mention_source(self, target: MentionTarget) -> MentionSource:
        """The ``@`` lookups seen from ``target()`` (the session a UI shows now): candidates,
        conversation matches (relevance, then its folder, then recency; ``target`` itself never),
        previews and a match's context."""
        return MentionSource(lambda: self, target)

    def start_conversation_search(self) -> None:
        """Build (or catch up) the conversation index in the background; returns at once.

        Call it once the sessions are on screen and the store caught up with other programs:
        the index is read from the store's listing."""
        if self.conversations is not None:
            self.conversations.start()

    def start_publishing(self, on_note: NoteListener | None = None) -> BackgroundPublishing | None:
        """Keep the sources `[catalog] publish` names current in the catalog, in a thread of its own:
        now, soon after every append or change live discovery sees, and on a timer (returns at once).

        None (and nothing imported) without a catalog or with nothing chosen to publish. A failure is
        never raised: `on_note(line)` hears it (in the publishing thread), `on_note(None)` once a
        later round succeeds. Stopped by `close`; calling it again returns the same."""
        if self.publishing is not None:
            return self.publishing
        chosen = self.settings.catalog.publish if self.settings is not None else ()
        if self.catalog is None or self.settings is None or not chosen:
            return None
        from sessionref.catalog.publisher import Publisher
        from sessionref.host.catalog_publishing import BackgroundPublishing

        publisher = Publisher(
            self.catalog.conninfo, self.store, machine=self.settings.catalog.machine_name, sources=chosen
        )
        publishing = BackgroundPublishing(publisher, on_note=on_note)
        self.publishing = publishing
        self._stop_nudging = self.store.subscribe(lambda _session_id, _events: publishing.nudge())
        publishing.start()
        return publishing

    # -- sending -----------------------------------------------------------------------------

    async def submit(
        self, target: Agent | DraftSession, text: str, *, signal: AbortSignal | None = None
    ) -> SubmitResult:
        """Parse the mentions in ``text``, prepare the snapshot, and deliver both to ``target``.

        A `DraftSession` target is created on disk only after preparation succeeded. Every failure
        happens before anything is queued (and before a draft session is created), so the caller
        keeps the draft: ``AgentError`` (AGENT_READ_ONLY, AGENT_EMPTY_MESSAGE), the store's error
        when the session cannot be created, or ``SessionReferenceError`` (invalid mention, self
        reference, too many, unreadable source, budget, cancelled via ``signal``). Text without
        mentions is delivered as a plain followup (idle) or steer (running).
        """
        if isinstance(target, Agent):
            target.ensure_writable()
        if not text.strip():
            raise AgentError(AGENT_EMPTY_MESSAGE, "there is nothing to send")
        prepared = await self.references.prepare_text(target, text, signal=signal)
        created = False
        if isinstance(target, DraftSession):
            await self.store.on_lane(
                target.id, self.store.create_session, cwd=target.cwd, session_id=target.id
            )
            agent = self.agent(target.id)
            created = True
        else:
            agent = target
        labels = _labels(prepared)
        ticket = deliver_with_references(agent, prepared, placement=self.placement)
        mentioned = [record["sessionId"] for record in prepared.references]
        if mentioned:
            await asyncio.to_thread(self.frecency.record, mentioned, int(_now_ms()))
        if not ticket.done:
            readable = "\n".join(
                str(block.get("text", "")) for block in prepared.content if isinstance(block, dict)
            )
            queued = QueuedMessage(ticket.prompt["id"], text, readable, labels)
            self._in_flight.setdefault(agent.id, []).append(_InFlight(queued, ticket))
            self._queue_changed(agent.id)
        return SubmitResult(agent, ticket, prepared, labels, created)

    def queued(self, agent: Agent | DraftSession | None) -> list[QueuedMessage]:
        """The direct messages sent to ``agent`` that still wait in its inbox, in send order."""
        if not isinstance(agent, Agent):
            return []
        waiting = {message["id"] for message in agent.pending()}
        in_flight = self._in_flight.get(agent.id, [])
        return [item.queued for item in in_flight if item.queued.message_id in waiting]

    async def stop(self, agent: Agent | DraftSession | None) -> list[ReturnedDraft]:
        """Stop ``agent``'s running reply and hand back every message still queued for it.

        What the reply streamed so far stays in the log. Each queued message is discarded with
        its snapshot (reason ``cancelled``); the drafts go to the ``on_drafts_returned`` listeners
        in one call and are also returned, in send order.
        """
        if not isinstance(agent, Agent):
            return []
        if agent.status == "running":
            await agent.cancel()
        self._collecting = {}
        try:
            for message in agent.pending():
                agent.discard_pending(message["id"], reason="cancelled")
            collected = self._collecting.get(agent.id, [])
        finally:
            self._collecting = None
        if collected:
            self._emit_drafts(agent.id, collected)
        return collected

    # -- listeners ---------------------------------------------------------------------------

    def on_queue_change(self, listener: QueueListener) -> Callable[[], None]:
        """Call ``listener(session_id)`` whenever that session's queued messages change."""
        return _add(self._queue_listeners, listener)

    def on_drafts_returned(self, listener: DraftsListener) -> Callable[[], None]:
        """Call ``listener(session_id, drafts)`` when sent messages come back as drafts (see `stop`)."""
        return _add(self._drafts_listeners, listener)

    def _entered(self, session_id: str, messages: list[dict[str, Any]]) -> None:
        ids = {message.get("id") for message in messages}
        if self._forget(session_id, lambda item: item.queued.message_id in ids):
            self._queue_changed(session_id)

    def _discarded(self, session_id: str, message: dict[str, Any], reason: str) -> None:
        found: list[_InFlight] = []

        def matches(item: _InFlight) -> bool:
            if item.queued.message_id == message.get("id"):
                found.append(item)
                return True
            return False

        if not self._forget(session_id, matches):
            return
        returned = [ReturnedDraft(session_id, item.queued.draft, reason) for item in found]
        if self._collecting is not None:
            self._collecting.setdefault(session_id, []).extend(returned)
        else:
            self._emit_drafts(session_id, returned)
        self._queue_changed(session_id)

    def _forget(self, session_id: str, matches: Callable[[_InFlight], bool]) -> bool:
        items = self._in_flight.get(session_id)
        if not items:
            return False
        kept = [item for item in items if not matches(item)]
        if len(kept) == len(items):
            return False
        if kept:
            self._in_flight[session_id] = kept
        else:
            del self._in_flight[session_id]
        return True

    def _queue_changed(self, session_id: str) -> None:
        for listener in list(self._queue_listeners):
            listener(session_id)

    def _emit_drafts(self, session_id: str, drafts: Sequence[ReturnedDraft]) -> None:
        for listener in list(self._drafts_listeners):
            listener(session_id, list(drafts))

    async def close(self, *, close_store: bool = True) -> None:
        """Cancel running turns (what was streamed is kept in the log), close the model's HTTP
        client, close the conversation index, then close the store."""
        if self._live is not None:
            await asyncio.to_thread(self._live.stop)
        if self._stop_nudging is not None:
            self._stop_nudging()
        if self.publishing is not None:
            await asyncio.to_thread(self.publishing.stop)  # waits for a round in progress: off the loop
        running = [agent for agent in self._agents.values() if agent.status == "running"]
        await asyncio.gather(*(agent.cancel() for agent in running))
        await self.model.aclose()
        if self.conversations is not None:
            # Stops a running build at its next batch; off the loop, as it may wait for that batch.
            await asyncio.to_thread(self.conversations.close)
        if self.catalog is not None:
            self.catalog.close()
        if close_store:
            self.store.close()

    # -- what the UIs read, write and follow of the store (they never reach past the workspace) -----

    @property
    def store_root(self) -> Path:
        """The store's folder (where the line mode keeps its prompt history)."""
        return Path(self.store.root)

    @property
    def caught_up(self) -> bool:
        """Whether the store has walked its logs since it opened (False: opened from its index alone)."""
        return bool(getattr(self.store, "caught_up", True))

    def watch_changes(self, on_change: Callable[[], None]) -> LiveDiscovery:
        """Keep the store current while the UI runs: watch the top of its folder and of every source's,
        probe the recently active sessions, re-walk on change, then `on_change()` (in the watching
        thread). Stopped by `close`; calling it again returns the same."""
        if self._live is None:
            roots = [count.source for count in self.store.sources()]
            linked = {Path(path).parent for source in roots for path in linked_files(source)}
            folders = [self.store_root, *(Path(source.root) for source in roots), *sorted(linked)]
            self._live = LiveDiscovery(
                self.store.refresh,
                folders,
                lambda: self._changed(on_change),
                refresh_changed=self.store.refresh_changed,
                recent_files=self.store.recent_files,
            )
            self._live.start()
        return self._live

    def _changed(self, on_change: Callable[[], None]) -> None:
        if self.publishing is not None:
            self.publishing.nudge()
        on_change()

    def catch_up(self, progress: Progress | None = None) -> None:
        """Walk the logs for what changed while the store was closed (blocking: call it in a thread)."""
        self.store.refresh(progress=progress)

    def title(self, session_id: str) -> str | None:
        """The session's title: its own, else the one the index derives from its first message."""
        title: str | None = self.store.title(session_id)
        return title

    def record(self, session_id: str) -> SessionRecord:
        """The session's index record (raises the store's coded error for an unknown session)."""
        record: SessionRecord = self.store.record(session_id)
        return record

    def machine_of(self, session_id: str) -> str | None:
        """The machine a listed remote session was published from (None: a local session, or no catalog)."""
        return None if self.catalog is None else self.catalog.machine_of(session_id)

    @property
    def catalog_note(self) -> str | None:
        """One line saying the last lookup lacks the catalog's sessions, and why (None: it has them)."""
        return None if self.catalog is None else self.catalog.note

    def has_session(self, session_id: str) -> bool:
        """Whether `session_id` names a session the store knows."""
        try:
            self.store.record(session_id)
        except Exception:
            return False
        return True

    def read_log(self, session_id: str) -> LogReport:
        """The session's log events, with the lines that could not be read."""
        report: LogReport = self.store.read_log_report(session_id)
        return report

    async def rename(self, session_id: str, title: str) -> None:
        """Give the session a new title (written off the event loop)."""
        await self.store.on_lane(session_id, self.store.rename, session_id, title)

    def on_log_appended(self, listener: LogListener) -> Callable[[], None]:
        """Call `listener(session_id, events)` after every append to any log (in the appending thread);
        returns the unsubscribe function."""
        unsubscribe: Callable[[], None] = self.store.subscribe(listener)
        return unsubscribe


def _add(listeners: list[Any], listener: Any) -> Callable[[], None]:
    listeners.append(listener)

    def remove() -> None:
        if listener in listeners:
            listeners.remove(listener)

    return remove


def _labels(prepared: PreparedReferencedMessage) -> tuple[str, ...]:
    """The labels of the sessions `prepared` references (its context message's records), in order."""
    return tuple(record["label"] for record in prepared.references)
