"""`SessionStore`: the embedded session store (DSH-compatible logs plus a SQLite discovery index).

Writes go to plain `session.jsonl` logs of sessions sessionref created, under a per-session OS
lock shared by every sessionref process, one `fsync` per batch (see `writer`). On an event loop,
writes go through the `*_async`/`enqueue_append` facade: each session has its own ordered write
lane on worker threads (`lanes`), so the loop never waits for a disk write and nothing reorders.
DSH `.zstd` logs and sessions created by other programs are only read (unless `write_foreign=True`). Discovery
(`list_sessions`, `read_titles`, `search_candidates`) is answered from the index and never reads
a log; `read_surface` reads and folds one log. No read ever writes: not a log, not a side file
(only the discovery index, which is ours).

Other agents' histories (`sources`: Claude Code, Codex CLI, Gemini CLI roots) are indexed and
listed beside the logs (`foreign_catalog`); their sessions (`claude-code:<uuid>`, …) are read
through their readers and are never written (`foreign_access`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from sessionref.contract.titles import normalize_title
from sessionref.service.protocols import Progress, SessionRecord, SurfaceSnapshot
from sessionref.store.access import SurfaceReport, fold_report, not_found, read_report, write_target
from sessionref.store.catalog import Catalog, Walk
from sessionref.store.errors import (
    STORE_CLOSED,
    STORE_INVALID_EVENT,
    STORE_INVALID_ID,
    STORE_INVALID_TITLE,
    STORE_NOTHING_TO_COMPACT,
    STORE_SESSION_EXISTS,
    STORE_UNREADABLE,
    StoreError,
    shown_id,
)
from sessionref.store.events import checked_time, compaction_checkpoint, session_header
from sessionref.store.foreign_access import (
    foreign_header,
    foreign_log_report,
    foreign_refusal,
    foreign_surface_report,
)
from sessionref.store.foreign_catalog import ForeignCatalog, SourceCount, walk_all
from sessionref.store.foreign_state import ForeignEntry, ForeignRoot
from sessionref.store.foreign_walk import ForeignWalk
from sessionref.store.index import DiscoveryIndex, index_path_for
from sessionref.store.lanes import WriteLanes, on_loop
from sessionref.store.layout import LOG_NAME, encode_session_segment, project_key
from sessionref.store.logfile import LogReport, is_header
from sessionref.store.scan import LogState, reserved_id_problem, scan_log
from sessionref.store.subscribers import Listener, Subscribers
from sessionref.store.writer import LogTarget, append_events, create_session_files, delete_session_files

log = logging.getLogger("sessionref.store")

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ConversationSource:
    """One session as conversation search sees it.

    `kind` is `"log"` for a session log under the store root (its `path`, read with the fast
    projection reader); other kinds are read through `read_surface`. `version` changes whenever
    the file does (size and modification time); `last_activity` is epoch milliseconds.
    """

    session_id: str
    kind: str
    path: str
    version: str
    last_activity: int


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
    `write_foreign=True` sessions another program created may be appended to (off by default:
    they are read-only; `[store] write_foreign_sessions` in the settings). `sources` are the
    other agents' history roots to list and read too (none by default; a host resolves them
    from the `[sources]` settings); a source indexed for the first time is walked during the
    open, with progress, even with `catch_up=False`.
    """
    return SessionStore(
        Path(root), progress=progress, catch_up=catch_up, write_foreign=write_foreign, sources=sources
    )


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _given(**options: int | None) -> dict[str, int]:
    """The options that were given (not None), to pass on so a left-out one keeps its default."""
    return {name: value for name, value in options.items() if value is not None}


def _io_error(what: str, error: OSError) -> StoreError:
    return StoreError(STORE_UNREADABLE, f"cannot {what}: {error.strerror or error}")


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
        self.root = root.expanduser().absolute()
        self.write_foreign = write_foreign
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise StoreError(STORE_UNREADABLE, f"cannot open the store at {self.root}: {error}") from error
        if not self.root.is_dir():
            raise StoreError(STORE_UNREADABLE, f"the store root {self.root} is not a directory")
        self._root_text = os.fspath(self.root)
        self._lock = threading.RLock()  # the catalogue and index
        self._write_lock = threading.RLock()  # this process's writers, one at a time (never readers)
        self._subscribers = Subscribers()
        self._lanes = WriteLanes()
        self._closed = False
        self._index = DiscoveryIndex(index_path_for(self.root))
        self._catalog = Catalog(self.root, self._index)
        self._foreign = ForeignCatalog(self._index, sources)
        # A new or rebuilt index has nothing to serve: the first walk is the indexing itself.
        self.caught_up = False
        with self._lock:
            self._catalog.rebuild_ids()
            self._catalog.set_foreign(self._foreign.entries)
            logs = catch_up or self._index.rebuilt or not self._catalog.states
            if logs or self._foreign.never_walked():
                try:
                    self._catch_up(progress, logs=logs)
                except BaseException:  # e.g. raised by `progress` to stop: nothing was written
                    self._index.close()
                    self._lanes.close()
                    raise
            self._catalog.candidates()  # built now so the first keystroke does not pay for it

    # -- internals -----------------------------------------------------------------------------

    def _catch_up(self, progress: Progress | None, *, logs: bool) -> None:
        """Walk the logs (when `logs`) and the foreign sources, then apply both (caller holds the lock).

        One progress run covers both: new log folders first, then history files to scan.
        """
        started = time.time_ns() // 1_000_000  # wall clock, not the stamp of events
        plan = self._foreign.plan()
        walk, foreign = walk_all(self._catalog, dict(self._catalog.states) if logs else None, plan, progress)
        if walk is not None:
            self._catalog.apply_walk(walk)
        self._apply_foreign(foreign, plan.started_ms)
        if walk is not None:
            self._index.mark_caught_up(started)
            self.caught_up = True

    def _apply_foreign(self, walks: list[ForeignWalk], started_ms: int) -> None:
        self._catalog.apply_foreign(self._foreign.apply(walks, started_ms))

    def _foreign_entry(self, session_id: str) -> ForeignEntry | None:
        """The foreign session listed under `session_id` (None for a log's id or an unknown one)."""
        with self._lock:
            self._check_open()
            return self._foreign.entry(session_id) if isinstance(session_id, str) else None

    def _refuse_foreign(self, session_id: str) -> None:
        """Raise the read-only refusal when `session_id` is a foreign session."""
        entry = self._foreign_entry(session_id)
        if entry is not None:
            raise foreign_refusal(entry)

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(STORE_CLOSED, "the session store is closed")

    def _state(self, session_id: str) -> LogState:
        with self._lock:
            self._check_open()
            return self._catalog.require(session_id)

    def _target(self, session_id: str) -> tuple[LogState, LogTarget]:
        state = self._state(session_id)
        target = write_target(self._root_text, state.path, session_id, write_foreign=self.write_foreign)
        return state, target

    def _report(self, session_id: str) -> LogReport:
        return read_report(self._root_text, self._state(session_id).path, session_id)

    def _caught_up_after_write(self, state: LogState) -> None:
        with self._lock:
            if not self._closed:
                self._catalog.rescan(state)

    def _in_lane(self, session_id: str, job: Callable[[], T]) -> asyncio.Future[T]:
        """Run `job` on the session's write lane; its place in the order is fixed by this call."""
        loop = asyncio.get_running_loop()
        try:
            return on_loop(loop, self._lanes.submit(session_id, job))
        except StoreError as error:  # closed: the same answer as a write that failed
            refused: asyncio.Future[T] = loop.create_future()
            refused.set_exception(error)
            return refused

    async def _locked(self, work: Callable[[], T]) -> T:
        """`work()` under the store lock, never waiting for it on the event loop.

        Uncontended (the usual case), it runs at once; while another thread holds the lock (a
        catch-up or a write updating the catalogue), it waits in a worker thread instead.
        """
        if self._lock.acquire(blocking=False):
            try:
                self._check_open()
                return work()
            finally:
                self._lock.release()
        return await asyncio.to_thread(self._with_lock, work)

    def _with_lock(self, work: Callable[[], T]) -> T:
        with self._lock:
            self._check_open()
            return work()

    # -- writing -------------------------------------------------------------------------------

    def create_session(
        self, *, cwd: str | None, session_id: str | None = None, created_at: int | None = None
    ) -> SessionRecord:
        """Create a session and durably write its header line (STORE_SESSION_EXISTS if the id is taken).

        The session's folder also gets sessionref's lock file, which marks it as ours (writable).
        """
        session_id = str(uuid.uuid4()) if session_id is None else session_id
        created_at = _now_ms() if created_at is None else created_at
        header = session_header(session_id, cwd, created_at)
        folders = (project_key(cwd), encode_session_segment(session_id))
        if folders[1].startswith("."):
            raise StoreError(STORE_INVALID_ID, "a session id must not start with a dot (a hidden folder)")
        if (reserved := reserved_id_problem(session_id)) is not None:
            raise StoreError(STORE_INVALID_ID, reserved)
        with self._write_lock:
            with self._lock:
                self._check_open()
                if session_id in self._catalog.by_id:
                    raise StoreError(STORE_SESSION_EXISTS, f'session "{shown_id(session_id)}" already exists')
            try:
                create_session_files(self._root_text, folders, header)
            except OSError as error:
                raise _io_error("write the session log", error) from error
            with self._lock:
                self._check_open()
                state = scan_log(self.root, f"{folders[0]}/{folders[1]}/{LOG_NAME}", None)
                if state is None or state.problem is not None:
                    raise StoreError(STORE_UNREADABLE, "the new session log cannot be read back")
                self._catalog.add(state)
        return SessionRecord(session_id, created_at, cwd, created_at)

    def append(
        self, session_id: str, events: Sequence[dict[str, Any]], *, time_ms: int | None = None
    ) -> list[dict[str, Any]]:
        """Append events durably (one fsync) with the next seqs of the log's real tail; returns them.

        Serialised with every other sessionref writer of this session, in any process. Events are
        stamped with `time_ms` (default: now; seeding and imports give their own).
        `STORE_READ_ONLY` for a session this store may not write, `STORE_LOG_BUSY` while another
        program is writing it, `STORE_INVALID_EVENT` for a bad event (nothing is written then).
        """
        stamp = checked_time(_now_ms() if time_ms is None else time_ms, "an event time")
        self._refuse_foreign(session_id)
        with self._write_lock:
            state, target = self._target(session_id)
            try:
                written = append_events(target, session_id, events, time_ms=stamp)
            except FileNotFoundError:
                raise not_found(session_id) from None
            except OSError as error:
                raise _io_error("append to the session log", error) from error
            if written:
                self._caught_up_after_write(state)
        if written:
            self._subscribers.notify(session_id, written)
        return written

    def rename(self, session_id: str, title: str, *, time_ms: int | None = None) -> None:
        """Record a user rename as a `session/title` event (source `{"kind": "user"}`).

        `time_ms` stamps it as in `append`.
        """
        normalized = normalize_title(title)
        if normalized is None:
            raise StoreError(STORE_INVALID_TITLE, "the title is empty once control characters are removed")
        self.append(
            session_id,
            [
                {
                    "type": "session/title",
                    "data": {"title": normalized, "messageSeqs": [], "source": {"kind": "user"}},
                }
            ],
            time_ms=time_ms,
        )

    def write_compaction(
        self,
        session_id: str,
        summary: str,
        *,
        compaction_id: str | None = None,
        time_ms: int | None = None,
    ) -> dict[str, Any]:
        """Replace the whole current surface with one checkpoint user message; returns that event."""
        if not isinstance(summary, str) or not summary.strip():
            raise StoreError(STORE_INVALID_EVENT, "a compaction summary must be non-empty text")
        self._refuse_foreign(session_id)
        with self._write_lock:
            surface = fold_report(self._report(session_id)).snapshot["events"]
            if not surface:
                shown = shown_id(session_id)
                raise StoreError(STORE_NOTHING_TO_COMPACT, f'session "{shown}" has nothing to compact')
            checkpoint = compaction_checkpoint(
                [event["seq"] for event in surface], summary, compaction_id or str(uuid.uuid4())
            )
            return self.append(session_id, [checkpoint], time_ms=time_ms)[0]

    def delete_session(self, session_id: str) -> None:
        """Delete a session (its log, side files and lock file); read-only sessions are refused."""
        self._refuse_foreign(session_id)
        with self._write_lock:
            state, target = self._target(session_id)
            try:
                delete_session_files(target)
            except FileNotFoundError:
                raise not_found(session_id) from None
            except OSError as error:
                raise _io_error("delete the session log", error) from error
            with self._lock:
                self._catalog.remove(state)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener(session_id, new_events)` after every successful append; returns an unsubscriber.

        Subscribed on a running event loop, the listener is called on that loop, in write order
        (writes run in worker threads); subscribed without one, in whichever thread wrote. See
        `subscribers`.
        """
        return self._subscribers.subscribe(listener)

    # -- writing from an event loop ------------------------------------------------------------

    def enqueue_append(
        self, session_id: str, events: Sequence[dict[str, Any]], *, time_ms: int | None = None
    ) -> asyncio.Future[list[dict[str, Any]]]:
        """Queue an `append` on the session's writer and return a future of the written events.

        Call it on a running event loop. The append's place among this session's writes is fixed
        by this call (appends queued one after another land in that order, awaited or not); it
        runs in a worker thread, so the loop never waits for the disk. Errors are those of
        `append`, raised by the future. Cancelling the future does not take the append back.
        """
        batch = list(events)
        stamp = _given(time_ms=time_ms)  # the method's own default applies, even where it is wrapped
        return self._in_lane(session_id, lambda: self.append(session_id, batch, **stamp))

    async def append_async(
        self, session_id: str, events: Sequence[dict[str, Any]], *, time_ms: int | None = None
    ) -> list[dict[str, Any]]:
        """`append` on the session's writer, off the event loop (see `enqueue_append`)."""
        return await self.enqueue_append(session_id, events, time_ms=time_ms)

    async def create_session_async(
        self, *, cwd: str | None, session_id: str | None = None, created_at: int | None = None
    ) -> SessionRecord:
        """`create_session` on the new session's writer, off the event loop."""
        chosen = str(uuid.uuid4()) if session_id is None else session_id
        created = _given(created_at=created_at)
        return await self._in_lane(
            chosen, lambda: self.create_session(cwd=cwd, session_id=chosen, **created)
        )

    async def rename_async(self, session_id: str, title: str, *, time_ms: int | None = None) -> None:
        """`rename` on the session's writer, off the event loop."""
        stamp = _given(time_ms=time_ms)
        await self._in_lane(session_id, lambda: self.rename(session_id, title, **stamp))

    async def write_compaction_async(
        self, session_id: str, summary: str, *, compaction_id: str | None = None
    ) -> dict[str, Any]:
        """`write_compaction` on the session's writer, off the event loop."""
        return await self._in_lane(
            session_id, lambda: self.write_compaction(session_id, summary, compaction_id=compaction_id)
        )

    # -- reading -------------------------------------------------------------------------------

    def read_log(self, session_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Header and readable events (packed chunk rows expanded; unreadable lines skipped)."""
        report = self.read_log_report(session_id)
        return report.header, report.events

    def read_log_report(self, session_id: str) -> LogReport:
        """Header, readable events and the line numbers of skipped unreadable lines (`LogReport`).

        For a foreign session: its header and surface events, as its reader builds them.
        """
        entry = self._foreign_entry(session_id)
        if entry is not None:
            return foreign_log_report(entry)
        return self._report(session_id)

    def header(self, session_id: str) -> dict[str, Any]:
        """The header line of a session, from the index (from the log if the index row is unusable)."""
        entry = self._foreign_entry(session_id)
        if entry is not None:
            return foreign_header(entry)
        state = self._state(session_id)
        try:
            header: object = json.loads(state.header_json or "")
        except (ValueError, RecursionError):
            header = None
        if not isinstance(header, dict) or not is_header(header) or header.get("id") != session_id:
            return self._report(session_id).header
        return header

    def record(self, session_id: str) -> SessionRecord:
        """Discovery metadata of one session (`updated_at`: its last activity)."""
        entry = self._foreign_entry(session_id)
        state: LogState | ForeignEntry = entry if entry is not None else self._state(session_id)
        return SessionRecord(session_id, state.created_at, state.cwd, state.updated_at)

    def title(self, session_id: str) -> str | None:
        """The current title (latest `session/title`, else the fallback title) from the index."""
        entry = self._foreign_entry(session_id)
        return entry.title if entry is not None else self._state(session_id).label_title

    def source_of(self, session_id: str) -> ForeignRoot | None:
        """The other agent's history a listed session comes from, or None for a session of this store."""
        entry = self._foreign_entry(session_id)
        if entry is None:
            self._state(session_id)  # STORE_SESSION_NOT_FOUND for an unknown id
            return None
        return entry.source

    def write_refusal(self, session_id: str) -> StoreError | None:
        """Why an append to this session would be refused (e.g. `STORE_READ_ONLY`), or None if it would not.

        An unknown id raises `STORE_SESSION_NOT_FOUND`; for a listed session this never raises.
        Foreign sessions (Claude Code, Codex CLI, Gemini CLI) are always refused.
        """
        entry = self._foreign_entry(session_id)
        if entry is not None:
            return foreign_refusal(entry)
        state = self._state(session_id)
        try:
            write_target(self._root_text, state.path, session_id, write_foreign=self.write_foreign)
        except StoreError as error:
            return error
        return None

    def is_writable(self, session_id: str) -> bool:
        """Whether appends are allowed (False for .zstd logs, other programs' sessions, read-only files)."""
        return self.write_refusal(session_id) is None

    def refresh(self, progress: Progress | None = None) -> None:
        """Catch the index up with logs and history files created, grown or removed meanwhile.

        The walk over the files runs without the store lock (other calls are served meanwhile);
        only applying its result takes the lock. `progress` reports logs and history files seen
        for the first time. Nothing but the index is written.
        """
        with self._lock:
            self._check_open()
            known = dict(self._catalog.states)
            plan = self._foreign.plan()
        started = time.time_ns() // 1_000_000  # wall clock, not the stamp of events
        walk, foreign = walk_all(self._catalog, known, plan, progress)
        with self._lock:
            self._check_open()
            self._catalog.apply_walk(walk or Walk([], [], []))
            self._apply_foreign(foreign, plan.started_ms)
            self._index.mark_caught_up(started)
            self.caught_up = True

    def sources(self) -> list[SourceCount]:
        """The other agents' sources this store reads: sessions found and when each was last walked."""
        with self._lock:
            self._check_open()
            return self._foreign.source_counts()

    def close(self) -> None:
        """Finish the writes already queued, then release the index; further calls raise STORE_CLOSED.

        Idempotent. Writes queued by `enqueue_append` and the `*_async` methods still land.
        """
        self._lanes.close()
        with self._lock:
            if not self._closed:
                self._closed = True
                self._index.close()

    # -- SessionQuery / CandidateSearch ----------------------------------------------------------

    async def list_sessions(self) -> Sequence[SessionRecord]:
        """All sessions, most recent activity first (time of the newest event), ties by id ascending."""
        return await self._locked(lambda: list(self._catalog.records()))

    async def read_surface(self, session_id: str) -> SurfaceSnapshot:
        """The folded surface of a session; StoreError with a stable code when it cannot be read."""
        return (await self.read_surface_report(session_id)).snapshot

    async def read_surface_report(self, session_id: str) -> SurfaceReport:
        """The folded surface and the log lines that were skipped as unreadable.

        A foreign session is read through its reader (bounded, read-only); the positions of the
        lines it could not use are reported, a last line still being written is not there yet.
        """
        entry = self._foreign_entry(session_id)
        if entry is not None:
            return await asyncio.to_thread(foreign_surface_report, entry)
        # Reading and folding are both proportional to the log: neither runs on the event loop.
        return await asyncio.to_thread(lambda: fold_report(self._report(session_id)))

    async def read_titles(self, session_ids: Sequence[str]) -> Mapping[str, str | None]:
        """Titles by id from the index (unknown ids map to None); never reads a log."""

        def titles() -> dict[str, str | None]:
            by_id, foreign = self._catalog.by_id, self._catalog.foreign
            found: dict[str, str | None] = {}
            for session_id in session_ids:
                state = by_id.get(session_id) or foreign.get(session_id)
                found[session_id] = state.label_title if state is not None else None
            return found

        return await self._locked(titles)

    async def conversation_sources(self) -> list[ConversationSource]:
        """Where each listed session's conversation can be read, with a cheap version of it.

        For the conversation-search catch-up: a source whose `version` changed since it was last
        indexed must be read again. Never reads a log. Foreign sessions have their source kind
        (`claude-code`, `codex`, `gemini`), their first file as `path`, and are read through
        `read_surface`.
        """

        def sources() -> list[ConversationSource]:
            by_id = self._catalog.by_id
            found = [self._conversation_source(session_id, state) for session_id, state in by_id.items()]
            found.extend(
                ConversationSource(session_id, entry.kind, entry.paths[0], entry.version, entry.updated_at)
                for session_id, entry in self._catalog.foreign.items()
            )
            return found

        return await self._locked(sources)

    def conversation_source(self, session_id: str) -> ConversationSource | None:
        """`conversation_sources()` for one session (None when it is not listed); never reads a log.

        For keeping the conversation index current after an append without listing every session.
        """
        with self._lock:
            self._check_open()
            state = self._catalog.by_id.get(session_id)
            if state is not None:
                return self._conversation_source(session_id, state)
            entry = self._catalog.foreign.get(session_id)
            if entry is None:
                return None
            return ConversationSource(session_id, entry.kind, entry.paths[0], entry.version, entry.updated_at)

    def _conversation_source(self, session_id: str, state: LogState) -> ConversationSource:
        return ConversationSource(
            session_id,
            "log",
            os.path.join(self._root_text, state.path),
            f"{state.size}:{state.mtime_ns}",
            state.updated_at,
        )

    async def search_candidates(
        self, *, exclude_id: str, target_cwd: str | None, needle: str, limit: int
    ) -> Sequence[tuple[SessionRecord, str]]:
        """Up to `limit` (record, label) pairs ranked like `list_candidates` (needle already lower-cased)."""
        return await self._locked(
            lambda: self._catalog.candidates().search(
                exclude_id=exclude_id, target_cwd=target_cwd, needle=needle, limit=limit
            )
        )
