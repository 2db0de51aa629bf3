"""`SessionStore`: the embedded session store (DSH-compatible logs plus a SQLite discovery index).

Writes go to plain `session.jsonl` logs of sessions sessionref created, under a per-session OS
lock shared by every sessionref process, one `fsync` per batch (see `writer`). On an event loop,
any write runs on the session's write lane with `on_lane` (`await store.on_lane(sid,
store.append, sid, events)`): each session has its own ordered lane on worker threads (`lanes`),
so the loop never waits for a disk write and nothing reorders. DSH `.zstd` logs and sessions
created by other programs are only read (unless `write_foreign=True`). Discovery
(`list_sessions`, `read_titles`, `search_candidates`) is answered from the index and never reads
a log; `read_surface` reads and folds one log. No read ever writes: not a log, not a side file
(only the discovery index, which is ours).

Other agents' histories (`sources`: Claude Code, Codex CLI, Gemini CLI roots) are indexed and
listed beside the logs (`foreign_catalog`); their sessions (`claude-code:<uuid>`, …) are read
through their readers and are never written (`foreign_access`).

`SessionStore` composes one `StoreState` (`store_state`: the root, locks, catalogue, index,
lanes and subscribers) with the collaborators it is handed to: `SessionReads` (reads and
discovery queries), `SessionWrites` (create, append, rename, compact, delete) and
`ConversationSources` (what the conversation index reads). Each can be built on a state alone.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from sessionref.service.conversation_rows import SessionConversation
from sessionref.service.protocols import Progress, SessionRecord, SurfaceSnapshot
from sessionref.store.access import SurfaceReport
from sessionref.store.conversation_sources import ConversationSource, ConversationSources
from sessionref.store.errors import STORE_UNREADABLE, StoreError
from sessionref.store.foreign_catalog import SourceCount
from sessionref.store.foreign_state import ForeignRoot
from sessionref.store.lanes import on_loop
from sessionref.store.logfile import LogReport
from sessionref.store.session_reads import SessionReads
from sessionref.store.session_writes import SessionWrites
from sessionref.store.store_state import StoreState
from sessionref.store.subscribers import Listener

__all__ = ["ConversationSource", "SessionStore", "open_store"]

P = ParamSpec("P")
T = TypeVar("T")


def open_store(
    root: str | Path,
    *,
    progress: Progress | None = None,
    catch_up: bool = True,
    write_foreign: bool = False,
    sources: Sequence[ForeignRoot] = (),
) -> SessionStore:
    """Open (creating if needed) the store at `root`; `progress(done, total)` reports first-time indexing.

    With `catch_up=False` and an existing index, discovery is served from the index at once and
    the walk over the logs is left to `refresh()` (see `SessionStore.caught_up`). With
    `write_foreign=True` sessions another program created may be appended to: only for a caller
    that knows no other program writes them (a test, an offline import); no host sets it, since an
    append can tear a line another program writes in two calls (docs/reliability.md). `sources` are the
    other agents' history roots to list and read too (none by default; a host resolves them
    from the `[sources]` settings); a source indexed for the first time is walked during the
    open, with progress, even with `catch_up=False`.
    """
    return SessionStore(
        Path(root), progress=progress, catch_up=catch_up, write_foreign=write_foreign, sources=sources
    )


class SessionStore:
    """Sessions under one root; implements `SessionQuery` and `CandidateSearch`. Thread-safe.

    Opened with `catch_up=False`, the store starts from its discovery index without walking the
    logs. Until `refresh()` has run (`caught_up`), what was written by others while it was closed
    is caught up only where it matters for correctness: reads always read the log itself and
    every write reads the log's tail under the session lock. Titles, new sessions and removed
    sessions written by others show up in discovery once `refresh()` completes.
    """

    def __init__(
        self,
        root: Path,
        *,
        progress: Progress | None = None,
        catch_up: bool = True,
        write_foreign: bool = False,
        sources: Sequence[ForeignRoot] = (),
    ) -> None:
        self.state = StoreState(
            root, progress=progress, catch_up=catch_up, write_foreign=write_foreign, sources=sources
        )
        self._reads = SessionReads(self.state)
        self._writes = SessionWrites(self.state)
        self._conversations = ConversationSources(self.state)

    @property
    def root(self) -> Path:
        """The store's root folder (absolute)."""
        return self.state.root

    @property
    def write_foreign(self) -> bool:
        """Whether sessions another program created may be appended to."""
        return self.state.write_foreign

    @write_foreign.setter
    def write_foreign(self, allowed: bool) -> None:
        """Allow (or stop) appends to sessions another program created (the settings may say so)."""
        self.state.write_foreign = allowed

    @property
    def caught_up(self) -> bool:
        """Whether a walk over the logs has ended since the store was opened (see `refresh`)."""
        return self.state.caught_up

    # -- the write lanes -------------------------------------------------------------------------

    def on_lane(
        self, session_id: str, call: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs
    ) -> asyncio.Future[T]:
        """Queue `call(*args, **kwargs)` on `session_id`'s write lane; a future of its result.

        Call it on a running event loop. The call's place among this session's writes is fixed
        by this call (writes queued one after another land in that order, awaited or not); it
        runs in a worker thread, so the loop never waits for the disk. Its errors are raised by
        the future (`STORE_CLOSED` once the store is closed). Cancelling the future does not take
        the write back. The arguments are held as given: pass a copy of a list you will change.
        """
        loop = asyncio.get_running_loop()
        try:
            return on_loop(
                loop, self.state.lanes.submit(session_id, functools.partial(call, *args, **kwargs))
            )
        except StoreError as error:  # closed: the same answer as a write that failed
            refused: asyncio.Future[T] = loop.create_future()
            refused.set_exception(error)
            return refused

    # -- writes (`SessionWrites`) ----------------------------------------------------------------

    def create_session(
        self, *, cwd: str | None, session_id: str | None = None, created_at: int | None = None
    ) -> SessionRecord:
        """Create a session and durably write its header line (see `SessionWrites.create_session`)."""
        return self._writes.create_session(cwd=cwd, session_id=session_id, created_at=created_at)

    def append(
        self, session_id: str, events: Sequence[dict[str, Any]], *, time_ms: int | None = None
    ) -> list[dict[str, Any]]:
        """Append events durably with the next seqs; returns them (see `SessionWrites.append`)."""
        return self._writes.append(session_id, events, time_ms=time_ms)

    def rename(self, session_id: str, title: str, *, time_ms: int | None = None) -> None:
        """Record a user rename as a `session/title` event (see `SessionWrites.rename`)."""
        self._writes.rename(session_id, title, time_ms=time_ms)

    def write_compaction(
        self,
        session_id: str,
        summary: str,
        *,
        compaction_id: str | None = None,
        time_ms: int | None = None,
    ) -> dict[str, Any]:
        """Replace the surface with one checkpoint; returns it (see `SessionWrites.write_compaction`)."""
        return self._writes.write_compaction(
            session_id, summary, compaction_id=compaction_id, time_ms=time_ms
        )

    def delete_session(self, session_id: str) -> None:
        """Delete a session's log, side files and lock file (see `SessionWrites.delete_session`)."""
        self._writes.delete_session(session_id)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener(session_id, new_events)` after every append; returns an unsubscriber."""
        return self._writes.subscribe(listener)

    # -- reads (`SessionReads`) ------------------------------------------------------------------

    def read_log(self, session_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Header and readable events (see `SessionReads.read_log`)."""
        return self._reads.read_log(session_id)

    def read_log_report(self, session_id: str) -> LogReport:
        """Header, readable events and skipped line numbers (see `SessionReads.read_log_report`)."""
        return self._reads.read_log_report(session_id)

    def header(self, session_id: str) -> dict[str, Any]:
        """The header line of a session (see `SessionReads.header`)."""
        return self._reads.header(session_id)

    def record(self, session_id: str) -> SessionRecord:
        """Discovery metadata of one session (see `SessionReads.record`)."""
        return self._reads.record(session_id)

    def records_with_titles(self, session_ids: Iterable[str]) -> dict[str, tuple[SessionRecord, str | None]]:
        """`record` and title of each listed id, in one call (see `SessionReads.records_with_titles`)."""
        return self._reads.records_with_titles(session_ids)

    def title(self, session_id: str) -> str | None:
        """The current title from the index (see `SessionReads.title`)."""
        return self._reads.title(session_id)

    def missing_session_problem(self, session_id: str) -> StoreError | None:
        """`STORE_UNREADABLE` when `session_id` is not listed because its folder cannot be read."""
        try:
            self.state.log_state(session_id)
        except StoreError as error:
            return error if error.code == STORE_UNREADABLE else None
        return None

    def source_of(self, session_id: str) -> ForeignRoot | None:
        """The other agent's history a session comes from, or None (see `SessionReads.source_of`)."""
        return self._reads.source_of(session_id)

    def write_refusal(self, session_id: str) -> StoreError | None:
        """Why an append would be refused, or None (see `SessionReads.write_refusal`)."""
        return self._reads.write_refusal(session_id)

    def is_writable(self, session_id: str) -> bool:
        """Whether appends are allowed (see `SessionReads.is_writable`)."""
        return self._reads.is_writable(session_id)

    async def list_sessions(self) -> Sequence[SessionRecord]:
        """All sessions, most recent activity first (see `SessionReads.list_sessions`)."""
        return await self._reads.list_sessions()

    async def read_surface(self, session_id: str) -> SurfaceSnapshot:
        """The folded surface of a session (see `SessionReads.read_surface`)."""
        return await self._reads.read_surface(session_id)

    async def read_surface_report(self, session_id: str) -> SurfaceReport:
        """The folded surface and the skipped lines (see `SessionReads.read_surface_report`)."""
        return await self._reads.read_surface_report(session_id)

    async def read_titles(self, session_ids: Sequence[str]) -> Mapping[str, str | None]:
        """Titles by id from the index (see `SessionReads.read_titles`)."""
        return await self._reads.read_titles(session_ids)

    async def search_candidates(
        self, *, exclude_id: str, target_cwd: str | None, needle: str, limit: int
    ) -> Sequence[tuple[SessionRecord, str]]:
        """Up to `limit` ranked (record, label) pairs (see `SessionReads.search_candidates`)."""
        return await self._reads.search_candidates(
            exclude_id=exclude_id, target_cwd=target_cwd, needle=needle, limit=limit
        )

    # -- the conversation index's reads (`ConversationSources`) ---------------------------------

    def conversation_sources(self) -> list[ConversationSource]:
        """Where each listed session's conversation is, with a cheap version of it (never reads a log)."""
        return self._conversations.conversation_sources()

    def conversation_source(self, session_id: str) -> ConversationSource | None:
        """`conversation_sources()` for one session (None when it is not listed)."""
        return self._conversations.conversation_source(session_id)

    def read_conversation(self, session_id: str) -> SessionConversation:
        """The projected rows of one session, read in this thread (see `ConversationSources`)."""
        return self._conversations.read_conversation(session_id)

    # -- the store as a whole --------------------------------------------------------------------

    def refresh(self, progress: Progress | None = None) -> bool:
        """Catch the index up with logs and history files created, grown or removed meanwhile; returns
        whether the walk found anything (a log or another agent's session new, changed or gone).

        The walk over the files runs without the store lock (other calls are served meanwhile);
        only applying its result takes the lock. `progress` reports logs and history files seen
        for the first time. Nothing but the index is written.
        """
        return self.state.refresh(progress)

    def refresh_changed(self, paths: Collection[Path]) -> bool:
        """`refresh`, narrowed to where `paths` (what a file watch reported) are; returns whether it found
        anything. A path in a source re-walks the folder holding it (that source's other folders are
        not listed); a path in the store walks the session folder holding it (or, for a path right
        in a project folder that is not there, that project folder); the index's own files are
        ignored; a path under no root read, or more than `MAX_PLACED_CHANGES` of them, walks
        everything. Only a whole walk of the logs counts as a catch-up (`caught_up_at`)."""
        return self.state.refresh_changed(paths)

    def recent_files(self, limit: int) -> list[str]:
        """The files (absolute paths) of the `limit` most recently active sessions, most recent first:
        the store's logs and the other agents' history files (live discovery probes them)."""
        return self.state.recent_files(limit)

    def sources(self) -> list[SourceCount]:
        """The other agents' sources this store reads: sessions found and when each was last walked."""
        return self.state.source_counts()

    def close(self) -> None:
        """Finish the writes already queued, then release the index; further calls raise STORE_CLOSED.

        Idempotent. Writes queued with `on_lane` still land.
        """
        self.state.close()
