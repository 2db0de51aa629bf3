"""`SessionStore`: the embedded session store (DSH-compatible logs plus a SQLite discovery index).

Writes go to plain `session.jsonl` logs, one flush+fsync per batch. DSH `.zstd` logs are read
only. Discovery (`list_sessions`, `read_titles`, `search_candidates`) is answered from the
index and never reads a log; `read_surface` reads and folds one log.
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
from pathlib import Path
from typing import Any

from sessionref.query import SessionRecord, SurfaceSnapshot
from sessionref.store.catalog import Catalog, Progress, Walk
from sessionref.store.errors import (
    STORE_CLOSED,
    STORE_INVALID_EVENT,
    STORE_INVALID_ID,
    STORE_INVALID_LOG,
    STORE_INVALID_TITLE,
    STORE_NOTHING_TO_COMPACT,
    STORE_READ_ONLY,
    STORE_SESSION_EXISTS,
    STORE_SESSION_NOT_FOUND,
    STORE_UNREADABLE,
    StoreError,
)
from sessionref.store.events import build_events
from sessionref.store.fold import fold_surface
from sessionref.store.index import DiscoveryIndex, index_path_for
from sessionref.store.layout import LOG_NAME, session_dir
from sessionref.store.logfile import (
    TORN_SUFFIX,
    append_lines,
    create_log,
    encode_line,
    is_compressed,
    parse_log,
    read_log_bytes,
    repair_torn_tail,
)
from sessionref.store.scan import MAX_SAFE_INTEGER, LogState, scan_log
from sessionref.store.titles import normalize_title

log = logging.getLogger("sessionref.store")

SESSION_FORMAT_VERSION = 0
Listener = Callable[[str, list[dict[str, Any]]], None]


def default_store_root() -> Path:
    """`$SESSIONREF_HOME` when set, else `<platformdirs user data dir>/sessions`."""
    configured = os.environ.get("SESSIONREF_HOME")
    if configured:
        return Path(configured).expanduser()
    import platformdirs

    return platformdirs.user_data_path("sessionref") / "sessions"


def open_store(
    root: str | Path, *, progress: Progress | None = None, catch_up: bool = True
) -> SessionStore:
    """Open (creating if needed) the store at `root`; `progress(done, total)` reports first-time indexing.

    With `catch_up=False` and an existing index, discovery is served from the index at once and
    the walk over the logs is left to `refresh()` (see `SessionStore.caught_up`).
    """
    return SessionStore(Path(root), progress=progress, catch_up=catch_up)


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class SessionStore:
    """Sessions under one root; implements `SessionQuery` and `CandidateSearch`. Thread-safe.

    Opened with `catch_up=False`, the store starts from its discovery index without walking the
    logs. Until `refresh()` has run (`caught_up`), what was written by others while it was closed
    is caught up only where it matters for correctness: `read_log`/`read_surface` always read the
    log itself and every write rescans its log first. Titles, new sessions and removed sessions
    written by others show up in discovery once `refresh()` completes.
    """

    def __init__(self, root: Path, *, progress: Progress | None = None, catch_up: bool = True) -> None:
        self.root = root.expanduser().absolute()
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise StoreError(STORE_UNREADABLE, f"cannot open the store at {self.root}: {error}") from error
        if not self.root.is_dir():
            raise StoreError(STORE_UNREADABLE, f"the store root {self.root} is not a directory")
        self._lock = threading.RLock()
        self._listeners: list[Listener] = []
        self._closed = False
        self._index = DiscoveryIndex(index_path_for(self.root))
        self._catalog = Catalog(self.root, self._index)
        # A new or rebuilt index has nothing to serve: the first walk is the indexing itself.
        self.caught_up = False
        with self._lock:
            self._catalog.rebuild_ids()
            if catch_up or self._index.rebuilt or not self._catalog.states:
                try:
                    walk = self._catalog.walk(dict(self._catalog.states), progress)
                except BaseException:  # e.g. raised by `progress` to stop: nothing was written
                    self._index.close()
                    raise
                self._catch_up(walk)
            self._catalog.candidates()  # built now so the first keystroke does not pay for it

    # -- internals -----------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(STORE_CLOSED, "the session store is closed")

    def _path(self, state: LogState) -> Path:
        return self.root / state.path

    def _repair(self, state: LogState) -> LogState | None:
        path = self._path(state)
        if is_compressed(path) or not os.access(path, os.W_OK):
            return state
        try:
            moved = repair_torn_tail(path)
        except OSError as error:
            log.warning("cannot repair the torn tail of %s: %s", path, error)
            return state
        if moved:
            log.warning(
                "moved a torn final line of %s (%d bytes) to %s", path, len(moved), path.name + TORN_SUFFIX
            )
        return self._catalog.rescan(state)

    def _writable_state(self, session_id: str) -> LogState:
        state = self._catalog.require(session_id)
        if is_compressed(self._path(state)):
            raise StoreError(STORE_READ_ONLY, f'session "{session_id}" is a read-only DSH log')
        current = self._catalog.rescan(state)
        if current is None:
            raise StoreError(STORE_SESSION_NOT_FOUND, f'session "{session_id}" not found')
        # Always make sure the log ends with a newline before appending (cheap when it does).
        current = self._repair(current)
        if current is None or current.torn:
            raise StoreError(STORE_UNREADABLE, f'the log of session "{session_id}" cannot be repaired')
        return current

    def _read(self, session_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        with self._lock:
            self._check_open()
            path = self._path(self._catalog.require(session_id))
        try:
            data = read_log_bytes(path)
        except FileNotFoundError:
            raise StoreError(STORE_SESSION_NOT_FOUND, f'session "{session_id}" not found') from None
        header, events = parse_log(data)
        if header.get("id") != session_id:
            raise StoreError(STORE_INVALID_LOG, f'the log of session "{session_id}" carries another id')
        return header, events

    def _notify(self, session_id: str, events: list[dict[str, Any]]) -> None:
        for listener in list(self._listeners):
            try:
                listener(session_id, events)
            except Exception:
                log.exception("a store listener failed")

    # -- writing -------------------------------------------------------------------------------

    def create_session(
        self, *, cwd: str | None, session_id: str | None = None, created_at: int | None = None
    ) -> SessionRecord:
        """Create a session and durably write its header line (STORE_SESSION_EXISTS if the id is taken)."""
        session_id = str(uuid.uuid4()) if session_id is None else session_id
        if not isinstance(session_id, str) or not session_id:
            raise StoreError(STORE_INVALID_ID, "a session id must be a non-empty string")
        if cwd is not None and not isinstance(cwd, str):
            raise StoreError(STORE_INVALID_EVENT, "cwd must be a string or None")
        try:
            session_id.encode("utf-8")
            if cwd is not None:
                cwd.encode("utf-8")
        except UnicodeEncodeError:
            raise StoreError(STORE_INVALID_ID, "the session id and cwd must be valid Unicode text") from None
        created_at = _now_ms() if created_at is None else created_at
        if (
            isinstance(created_at, bool)
            or not isinstance(created_at, int)
            or not 0 <= created_at <= MAX_SAFE_INTEGER
        ):
            raise StoreError(STORE_INVALID_EVENT, "createdAt must be non-negative epoch milliseconds")
        header: dict[str, Any] = {
            "type": "session",
            "version": SESSION_FORMAT_VERSION,
            "id": session_id,
            "createdAt": created_at,
        }
        if cwd is not None:
            header["cwd"] = cwd
        header["delegationDepth"] = 0
        with self._lock:
            self._check_open()
            if session_id in self._catalog.by_id:
                raise StoreError(STORE_SESSION_EXISTS, f'session "{session_id}" already exists')
            folder = session_dir(self.root, session_id, cwd)
            path = folder / LOG_NAME
            try:
                create_log(path, header)
            except FileExistsError:
                raise StoreError(STORE_SESSION_EXISTS, f'session "{session_id}" already exists') from None
            except OSError as error:
                raise StoreError(STORE_UNREADABLE, f"cannot write the session log: {error}") from error
            state = scan_log(self.root, path.relative_to(self.root).as_posix(), None)
            if state is None or state.problem is not None:
                raise StoreError(STORE_UNREADABLE, "the new session log cannot be read back")
            self._catalog.add(state)
        return SessionRecord(session_id, created_at, cwd)

    def append(self, session_id: str, events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """Append events with contiguous seqs and the current time, durably (one fsync); returns them."""
        with self._lock:
            self._check_open()
            state = self._writable_state(session_id)
            next_seq = 0 if state.last_seq is None else state.last_seq + 1
            written = build_events(events, first_seq=next_seq, time_ms=_now_ms())
            if not written:
                return []
            if any(isinstance(event.get("surfaceOp"), dict) for event in written):
                header, existing = self._read(session_id)
                fold_surface(header, [*existing, *written])
            lines = [encode_line(event) for event in written]
            try:
                append_lines(self._path(state), lines)
            except OSError as error:
                raise StoreError(STORE_UNREADABLE, f"cannot append to the session log: {error}") from error
            self._catalog.rescan(state)
        self._notify(session_id, written)
        return written

    def rename(self, session_id: str, title: str) -> None:
        """Record a user rename as a `session/title` event (source `{"kind": "user"}`)."""
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
        )

    def write_compaction(
        self, session_id: str, summary: str, *, compaction_id: str | None = None
    ) -> dict[str, Any]:
        """Replace the whole current surface with one checkpoint user message; returns that event."""
        if not isinstance(summary, str) or not summary.strip():
            raise StoreError(STORE_INVALID_EVENT, "a compaction summary must be non-empty text")
        with self._lock:
            header, events = self._read(session_id)
            surface = fold_surface(header, events)["events"]
            if not surface:
                raise StoreError(STORE_NOTHING_TO_COMPACT, f'session "{session_id}" has nothing to compact')
            seqs = [event["seq"] for event in surface]
            message = {
                "source": {
                    "kind": "plugin",
                    "plugin": "compact",
                    "compactionId": compaction_id or str(uuid.uuid4()),
                },
                "content": [{"type": "text", "text": summary}],
                "role": "user",
                "id": str(uuid.uuid4()),
            }
            checkpoint = {
                "type": "user/message",
                "data": message,
                "sourceEventSeqs": seqs,
                "surfaceOp": {"op": "replace", "start": seqs[0], "end": seqs[-1]},
            }
            return self.append(session_id, [checkpoint])[0]

    def delete_session(self, session_id: str) -> None:
        """Delete a session written by this store (its log and side files); DSH .zstd logs are refused."""
        with self._lock:
            self._check_open()
            state = self._catalog.require(session_id)
            path = self._path(state)
            if is_compressed(path):
                raise StoreError(STORE_READ_ONLY, f'session "{session_id}" is a read-only DSH log')
            try:
                for candidate in (path, path.with_name(path.name + TORN_SUFFIX)):
                    candidate.unlink(missing_ok=True)
                for folder in (path.parent, path.parent.parent):
                    try:
                        folder.rmdir()
                    except OSError:
                        break
            except OSError as error:
                raise StoreError(STORE_UNREADABLE, f"cannot delete the session log: {error}") from error
            self._catalog.remove(state)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener(session_id, new_events)` after every successful append; returns an unsubscriber."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    # -- reading -------------------------------------------------------------------------------

    def read_log(self, session_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Header and raw events (packed chunk rows expanded); STORE_INVALID_LOG for a bad line."""
        return self._read(session_id)

    def header(self, session_id: str) -> dict[str, Any]:
        """The header line of a session, from the index."""
        with self._lock:
            self._check_open()
            state = self._catalog.require(session_id)
            return json.loads(state.header_json or "{}")

    def record(self, session_id: str) -> SessionRecord:
        """Discovery metadata of one session."""
        with self._lock:
            self._check_open()
            state = self._catalog.require(session_id)
            return SessionRecord(session_id, state.created_at, state.cwd)

    def title(self, session_id: str) -> str | None:
        """The current title (latest `session/title`, else the fallback title) from the index."""
        with self._lock:
            self._check_open()
            return self._catalog.require(session_id).label_title

    def is_writable(self, session_id: str) -> bool:
        """Whether appends are possible (False for DSH .zstd logs and read-only files)."""
        with self._lock:
            path = self._path(self._catalog.require(session_id))
        return not is_compressed(path) and os.access(path, os.W_OK)

    def refresh(self, progress: Progress | None = None) -> None:
        """Catch the index up with logs created, grown or removed outside this store object.

        The walk over the files runs without the store lock (other calls are served meanwhile);
        only applying its result takes the lock. `progress` reports logs seen for the first time.
        """
        with self._lock:
            self._check_open()
            known = dict(self._catalog.states)
        walk = self._catalog.walk(known, progress)
        with self._lock:
            self._check_open()
            self._catch_up(walk)

    def _catch_up(self, walk: Walk) -> None:
        for state in self._catalog.apply_walk(walk):
            self._repair(state)
        self.caught_up = True

    def close(self) -> None:
        """Release the index; further calls raise STORE_CLOSED (idempotent)."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._index.close()

    # -- SessionQuery / CandidateSearch ----------------------------------------------------------

    async def list_sessions(self) -> Sequence[SessionRecord]:
        """All sessions newest first (createdAt descending, ties by id ascending)."""
        with self._lock:
            self._check_open()
            return list(self._catalog.records())

    async def read_surface(self, session_id: str) -> SurfaceSnapshot:
        """The folded surface of a session; StoreError with a stable code when it cannot be read."""
        # Reading and folding are both proportional to the log: neither runs on the event loop.
        return await asyncio.to_thread(lambda: fold_surface(*self._read(session_id)))

    async def read_titles(self, session_ids: Sequence[str]) -> Mapping[str, str | None]:
        """Titles by id from the index (unknown ids map to None); never reads a log."""
        with self._lock:
            self._check_open()
            by_id = self._catalog.by_id
            return {
                session_id: (by_id[session_id].label_title if session_id in by_id else None)
                for session_id in session_ids
            }

    async def search_candidates(
        self, *, exclude_id: str, target_cwd: str | None, needle: str, limit: int
    ) -> Sequence[tuple[SessionRecord, str]]:
        """Up to `limit` (record, label) pairs ranked like `list_candidates` (needle already lower-cased)."""
        with self._lock:
            self._check_open()
            index = self._catalog.candidates()
            return index.search(exclude_id=exclude_id, target_cwd=target_cwd, needle=needle, limit=limit)
