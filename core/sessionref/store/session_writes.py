"""`SessionWrites`: the store's synchronous writes (create, append, rename, compact, delete).

Each runs in the calling thread: one writer of this process at a time, under the session's OS
lock shared by every sessionref process, one `fsync` per batch (see `writer`). On an event loop
run them on the session's write lane (`SessionStore.on_lane`). Built on a `StoreState` alone.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any

from sessionref.contract.titles import normalize_title
from sessionref.service.protocols import SessionRecord
from sessionref.store.access import fold_report, not_found
from sessionref.store.errors import (
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
from sessionref.store.layout import LOG_NAME, encode_session_segment, project_key
from sessionref.store.scan import reserved_id_problem, scan_log
from sessionref.store.store_state import StoreState, io_error, now_ms
from sessionref.store.subscribers import Listener
from sessionref.store.writer import append_events, create_session_files, delete_session_files


class SessionWrites:
    """Writing the sessions `store` owns; foreign sessions are refused (`STORE_READ_ONLY`)."""

    def __init__(self, store: StoreState) -> None:
        self._store = store

    def create_session(
        self, *, cwd: str | None, session_id: str | None = None, created_at: int | None = None
    ) -> SessionRecord:
        """Create a session and durably write its header line (STORE_SESSION_EXISTS if the id is taken).

        The session's folder also gets sessionref's lock file, which marks it as ours (writable).
        """
        session_id = str(uuid.uuid4()) if session_id is None else session_id
        created_at = now_ms() if created_at is None else created_at
        header = session_header(session_id, cwd, created_at)
        folders = (project_key(cwd), encode_session_segment(session_id))
        if folders[1].startswith("."):
            raise StoreError(STORE_INVALID_ID, "a session id must not start with a dot (a hidden folder)")
        if (reserved := reserved_id_problem(session_id)) is not None:
            raise StoreError(STORE_INVALID_ID, reserved)
        with self._store.write_lock:
            with self._store.lock:
                self._store.check_open()
                if session_id in self._store.catalog.by_id:
                    raise StoreError(STORE_SESSION_EXISTS, f'session "{shown_id(session_id)}" already exists')
            try:
                create_session_files(self._store.root_text, folders, header)
            except OSError as error:
                raise io_error("write the session log", error) from error
            with self._store.lock:
                self._store.check_open()
                state = scan_log(self._store.root, f"{folders[0]}/{folders[1]}/{LOG_NAME}", None)
                if state is None or state.problem is not None:
                    raise StoreError(STORE_UNREADABLE, "the new session log cannot be read back")
                self._store.catalog.add(state)
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
        stamp = checked_time(now_ms() if time_ms is None else time_ms, "an event time")
        self._store.refuse_foreign(session_id)
        with self._store.write_lock:
            state, target = self._store.target(session_id)
            try:
                written = append_events(target, session_id, events, time_ms=stamp)
            except FileNotFoundError:
                raise not_found(session_id) from None
            except OSError as error:
                raise io_error("append to the session log", error) from error
            if written:
                self._store.rescan_after_write(state)
        if written:
            self._store.subscribers.notify(session_id, written)
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
        self._store.refuse_foreign(session_id)
        with self._store.write_lock:
            surface = fold_report(self._store.report(session_id)).snapshot["events"]
            if not surface:
                shown = shown_id(session_id)
                raise StoreError(STORE_NOTHING_TO_COMPACT, f'session "{shown}" has nothing to compact')
            checkpoint = compaction_checkpoint(
                [event["seq"] for event in surface], summary, compaction_id or str(uuid.uuid4())
            )
            return self.append(session_id, [checkpoint], time_ms=time_ms)[0]

    def delete_session(self, session_id: str) -> None:
        """Delete a session (its log, side files and lock file); read-only sessions are refused."""
        self._store.refuse_foreign(session_id)
        with self._store.write_lock:
            state, target = self._store.target(session_id)
            try:
                delete_session_files(target)
            except FileNotFoundError:
                raise not_found(session_id) from None
            except OSError as error:
                raise io_error("delete the session log", error) from error
            with self._store.lock:
                self._store.catalog.remove(state)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener(session_id, new_events)` after every successful append; returns an unsubscriber.

        Subscribed on a running event loop, the listener is called on that loop, in write order
        (writes run in worker threads); subscribed without one, in whichever thread wrote. See
        `subscribers`.
        """
        return self._store.subscribers.subscribe(listener)
