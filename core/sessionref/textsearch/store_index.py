"""`StoreConversationIndex`: one store's conversation index, built and kept current in the background.

It owns the `TextIndex` file beside the store's discovery index and one worker thread that does
every write to it, in order: opening the file (checking it, recreating it when damaged), the
catch-up with the store (`catch_up`: a first build with progress, or what changed since the last
run), and the refresh of sessions the store reports appended to (debounced by
`LIVE_REFRESH_DELAY`, only for events that change a conversation). A UI calls `start()` once its
sessions are on screen (it returns at once); the CLI calls `catch_up_now()` and waits.

It implements the reference service's `ConversationQuery`: `search_conversations` is called in a
worker thread by the service. While the index is opened or built it answers `indexing` with
progress (before `start` too: a UI starts it once its sessions are shown), without a usable
SQLite FTS5 `unavailable` with the reason; a search that finds the
file damaged (the engine resets it) answers `indexing` and queues the rebuild.

`IndexStatus` is in `index_status`; what the index needs of its store, and where its file lives,
in `store_link` (both re-exported here).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any, Final

from sessionref.service.protocols import ConversationRequest, ConversationSearchResult
from sessionref.store.errors import StoreError
from sessionref.store.fold import SURFACE_TYPES
from sessionref.textsearch.catch_up import (
    CatchUpPlan,
    CatchUpReport,
    CatchUpStopped,
    Progress,
    catch_up,
    refresh,
)
from sessionref.textsearch.errors import TEXT_SEARCH_CLOSED, TEXT_SEARCH_UNAVAILABLE, TextSearchError
from sessionref.textsearch.index import MAX_LIMIT, TextIndex
from sessionref.textsearch.index_status import IndexStatus, Phase
from sessionref.textsearch.protocol import SearchCancellation, SessionFacts
from sessionref.textsearch.query import QueryPlan, parse_query
from sessionref.textsearch.question import ENOUGH_STRICT_MATCHES, question_plans
from sessionref.textsearch.store_link import ConversationStore, text_index_path

__all__ = [
    "LIVE_REFRESH_DELAY",
    "ConversationStore",
    "IndexStatus",
    "StoreConversationIndex",
    "text_index_path",
]

log = logging.getLogger("sessionref.textsearch")

LIVE_REFRESH_DELAY: Final = 1.0
"""Seconds from a new message in a session to its rows being re-read, gathering the messages of
that second into one read of the log. A reply's streamed chunks never count (they change no
conversation): only its final message does, so a reply costs one re-read, a second after it ends.
Search may miss a message for that second; a shorter delay re-reads busy logs more often."""

NOT_OPEN: Final = "the index of what was said is closed"


class StoreConversationIndex:
    """The conversation index of `store` (see the module doc). Thread-safe.

    `path` defaults to `text_index_path(store.root)`; `verify` runs SQLite's `quick_check` when the
    file is opened (a damaged file is otherwise found by its first failing statement).
    """

    def __init__(
        self,
        store: ConversationStore,
        *,
        path: Path | None = None,
        verify: bool = True,
        live_delay: float = LIVE_REFRESH_DELAY,
    ) -> None:
        self._store = store
        self.path = text_index_path(Path(store.root)) if path is None else path
        self._verify = verify
        self._live_delay = live_delay
        self._lock = threading.Lock()
        self._status = IndexStatus("idle")
        self._index: TextIndex | None = None
        self._resets_seen = 0
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="conversation-index")
        self._stopping = threading.Event()
        self._started = False
        self._unsubscribe: Callable[[], None] | None = None
        self._dirty: set[str] = set()
        self._timer: threading.Timer | None = None
        self._unreadable: dict[str, str] = {}
        self.refreshes = 0
        """How many debounced refreshes ran (each re-reads every session appended to meanwhile)."""

    # -- state ---------------------------------------------------------------------------------

    @property
    def status(self) -> IndexStatus:
        """Where the index stands now."""
        with self._lock:
            return self._status

    def _set(self, phase: Phase, **changes: Any) -> None:
        with self._lock:
            if self._status.phase == "closed":
                return
            fields = {"progress": None, "skipped": self._status.skipped, "message": None, **changes}
            self._status = IndexStatus(phase, **fields)

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> None:
        """Open and catch up in the background, then follow the store's appends (idempotent).

        Returns at once; `status` says how far it got. Call it once the sessions are on screen."""
        with self._lock:
            if self._started or self._status.phase == "closed":
                return
            self._started = True
            self._status = IndexStatus("opening")
        self._submit(self._follow_and_catch_up)

    def request_catch_up(self) -> None:
        """Queue another catch-up with the store (after the store itself caught up with other programs)."""
        if self._started:
            self._submit(self._catch_up_quietly)

    def catch_up_now(self, progress: Progress | None = None) -> CatchUpReport:
        """Open if needed and catch up in the calling thread, which must not run an event loop (the
        CLI). `progress(done, total)` reports a build. Raises `TEXT_SEARCH_UNAVAILABLE` when no
        index can be used."""
        with self._lock:
            if self._status.phase == "closed":
                raise TextSearchError(TEXT_SEARCH_CLOSED, "the conversation index is closed")
            self._started = True
        report = self._catch_up(progress)
        status = self.status
        if status.phase == "unavailable":
            raise TextSearchError(TEXT_SEARCH_UNAVAILABLE, status.message or NOT_OPEN)
        return report

    def drain(self, timeout: float | None = None) -> None:
        """Run the refresh of sessions appended to now, without its delay, and wait until every
        queued job (catch-up, refresh) is done. For tests and a host about to read the index."""
        self._flush_dirty()
        self._submit(lambda: None).result(timeout)

    def close(self) -> None:
        """Stop following the store, stop a running catch-up at its next session, close the file.

        Blocks until the worker stopped (at most one batch of writes). Idempotent."""
        with self._lock:
            if self._status.phase == "closed":
                return
            self._status = IndexStatus("closed")
            timer, self._timer = self._timer, None
            unsubscribe, self._unsubscribe = self._unsubscribe, None
        self._stopping.set()
        if timer is not None:
            timer.cancel()
        if unsubscribe is not None:
            unsubscribe()
        self._worker.shutdown(wait=True, cancel_futures=True)
        if self._index is not None:
            self._index.close()

    def _submit(self, job: Callable[[], None]) -> Future[None]:
        try:
            return self._worker.submit(job)
        except RuntimeError:  # shut down: closed meanwhile
            done: Future[None] = Future()
            done.set_result(None)
            return done

    # -- the worker's jobs -----------------------------------------------------------------------

    def _open(self) -> TextIndex | None:
        if self._index is not None:
            return self._index
        self._set("opening")
        try:
            self._index = TextIndex(self.path, verify=self._verify)
        except (TextSearchError, OSError) as error:
            message = error.message if isinstance(error, TextSearchError) else str(error)
            log.warning("the conversation index %s cannot be used: %s", self.path, message)
            self._set("unavailable", message=message)
            return None
        self._resets_seen = self._index.resets
        return self._index

    def _follow_and_catch_up(self) -> None:
        # Subscribed from this thread (no event loop runs here): the store then calls the listener
        # in the thread that wrote, never on a UI loop.
        unsubscribe = self._store.subscribe(self._appended)
        with self._lock:
            if self._status.phase == "closed":
                unsubscribe()
                return
            self._unsubscribe = unsubscribe
        self._catch_up_quietly()

    def _catch_up_quietly(self) -> None:
        try:
            self._catch_up(None)
        except Exception:  # a bug: keep serving what the index holds, and say so in the log
            log.exception("the conversation catch-up failed")
            if self._index is None or self.status.phase != "ready":
                self._set("unavailable", message="the index of what was said could not be brought up to date")

    def _catch_up(self, progress: Progress | None, *, retry: bool = True) -> CatchUpReport:
        index = self._open()
        if index is None:
            return CatchUpReport()
        was_ready = self.status.phase == "ready"

        def planned(plan: CatchUpPlan) -> None:
            if plan.build:
                self._set("building", progress=(0, plan.total))

        def built(done: int, total: int | None) -> None:
            if self._stopping.is_set():
                raise CatchUpStopped("the conversation index is closing")
            self._set("building", progress=(done, total or done))
            if progress is not None:
                progress(done, total or done)

        try:
            report = catch_up(
                index,
                self._store.conversation_sources(),
                self._store.read_conversation,
                progress=built,
                stopped=self._stopping.is_set,
                known_unreadable=self._unreadable,
                on_plan=planned,
            )
        except CatchUpStopped:
            return CatchUpReport()
        except TextSearchError as error:
            if retry and error.code == TEXT_SEARCH_UNAVAILABLE and self._was_reset(index):
                return self._catch_up(progress, retry=False)  # damaged and reset: feed it all again
            self._set("ready" if was_ready else "unavailable", message=error.message)
            raise
        self._set("ready", skipped=len(report.skipped))
        return report

    def _was_reset(self, index: TextIndex) -> bool:
        with self._lock:
            if index.resets == self._resets_seen:
                return False
            self._resets_seen = index.resets
            return True

    # -- following the store's appends ------------------------------------------------------------

    def _appended(self, session_id: str, events: list[dict[str, Any]]) -> None:
        """The store's listener: note a session whose conversation changed; refresh it after a delay."""
        if not any(event.get("type") in SURFACE_TYPES for event in events):
            return  # chunks, titles, turn markers: nothing a search sees
        with self._lock:
            if self._status.phase == "closed":
                return
            self._dirty.add(session_id)
            if self._timer is not None:
                return
            self._timer = threading.Timer(self._live_delay, self._flush_dirty)
            self._timer.daemon = True
            self._timer.start()

    def _flush_dirty(self) -> None:
        with self._lock:
            timer, self._timer = self._timer, None
            dirty, self._dirty = self._dirty, set()
        if timer is not None:
            timer.cancel()
        if dirty:
            self._submit(lambda: self._refresh(dirty))

    def _refresh(self, session_ids: Collection[str]) -> None:
        index = self._index
        if index is None or self._stopping.is_set():
            return
        try:
            sources = {session_id: self._store.conversation_source(session_id) for session_id in session_ids}
            refresh(
                index,
                sources,
                self._store.read_conversation,
                known_unreadable=self._unreadable,
            )
            self.refreshes += 1
        except (StoreError, TextSearchError) as error:  # closing, or the file was damaged meanwhile
            log.warning("cannot refresh the conversation index: %s", error)
            if isinstance(error, TextSearchError) and self._was_reset(index):
                self._catch_up_quietly()

    # -- ConversationQuery -----------------------------------------------------------------------

    def _facts(self, session_ids: Sequence[str]) -> Mapping[str, SessionFacts]:
        try:  # one call for records and titles; ids no longer listed (deleted) are left out
            found = self._store.records_with_titles(session_ids)
        except StoreError:  # the store closed: nothing is a result
            return {}
        return {
            session_id: SessionFacts(record.cwd, record.last_activity, title)
            for session_id, (record, title) in found.items()
        }

    def search_conversations(
        self, request: ConversationRequest, *, cancel: threading.Event
    ) -> ConversationSearchResult:
        """Labelled sessions whose conversation matches `request.text`, best first (`ConversationQuery`).

        A `request.question` is loose text (a question, several words): the strict plan first (every
        content word); when it finds fewer than `ENOUGH_STRICT_MATCHES` sessions, the loose one (any
        form of any content word, by bm25, typos forgiven) fills the rest after them (see
        `question.py`). Text of stop words only is searched as typed.
        """
        if not request.question:
            return self._search_plan(parse_query(request.text), request, cancel)
        plans = question_plans(request.text)
        if plans.strict is None or plans.loose is None:  # only stop words: search them as typed
            return self._search_plan(parse_query(request.text), request, cancel)
        strict = self._search_plan(plans.strict, request, cancel)
        if strict.status != "ok" or len(strict.matches) >= min(request.limit, ENOUGH_STRICT_MATCHES):
            return strict
        loose = self._search_plan(plans.loose, request, cancel)
        if loose.status != "ok":
            return strict
        seen = {match.session_id for match in strict.matches}
        merged = strict.matches + tuple(match for match in loose.matches if match.session_id not in seen)
        return replace(
            strict, matches=merged[: request.limit], complete=strict.complete and loose.complete, ranked=True
        )

    def _search_plan(
        self, plan: QueryPlan, request: ConversationRequest, cancel: threading.Event
    ) -> ConversationSearchResult:
        """The matches of one parsed `plan`, or why the index could not answer."""
        if plan.status != "ok":
            return ConversationSearchResult(status=plan.status, pending=plan.pending)
        status = self.status
        index = self._index
        if status.phase in ("idle", "opening", "building"):  # idle: a UI starts it once its sessions show
            return ConversationSearchResult(status="indexing", progress=status.progress)
        if status.phase != "ready" or index is None:
            return ConversationSearchResult(status="unavailable", message=status.message or NOT_OPEN)
        try:
            return index.search_plan(
                plan,
                replace(request, limit=min(request.limit, MAX_LIMIT)),
                facts=self._facts,
                cancel=SearchCancellation(cancel),
            )
        except TextSearchError as error:
            if error.code == TEXT_SEARCH_UNAVAILABLE and self._was_reset(index):
                self._set("building")
                self._submit(self._catch_up_quietly)  # the file was damaged and reset: rebuild it
                return ConversationSearchResult(status="indexing")
            if error.code == TEXT_SEARCH_CLOSED:
                return ConversationSearchResult(status="unavailable", message=NOT_OPEN)
            raise
