"""`CatalogReader`: the catalog behind the service's read protocols, so the service never learns
what PostgreSQL is.

It implements `SessionQuery` (listing, a session's surface, titles), `CandidateSearch` (the `@`
completion's fast path, `discovery.find_sessions`) and `ConversationQuery` (full-text search,
`conversation_search.search_messages`) over what this role may see (row-level security decides).
Sessions published from this reader's own machine are left out of listings and searches: the
local store lists them. An id published from several machines or by several people is one
session (ids are globally unique: the same id is the same session copied): its newest copy is
listed and read.

One connection, opened on first use, used by one call at a time; `cancel` interrupts the call in
progress (a deadline passed). After a connection failure the reader does not try again for
`RETRY_AFTER_SECONDS`, so a catalog that is down costs a keystroke nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from sessionref.catalog.connection import connect, translated
from sessionref.catalog.conversation_search import search_messages
from sessionref.catalog.copies import surface_from_rows
from sessionref.catalog.discovery import CatalogSession, find_sessions, session_of
from sessionref.catalog.errors import CATALOG_SESSION_NOT_FOUND, CATALOG_UNREACHABLE, CatalogError
from sessionref.catalog.schema import check_schema
from sessionref.service.protocols import (
    ConversationRequest,
    ConversationSearchResult,
    SessionRecord,
    SurfaceSnapshot,
)

RETRY_AFTER_SECONDS: Final = 5.0
"""After a failed connection, calls fail at once (CATALOG_UNREACHABLE) for this long."""
STATEMENT_TIMEOUT_MS: Final = 5_000
"""The server stops any one statement of a reader after this long, whoever is waiting for it."""
LISTED_SESSIONS: Final = 10_000
"""`list_sessions` returns at most this many of the newest visible sessions (ids are resolved and
generic listings made from it; discovery uses `search_candidates`, which searches them all)."""


def folder_name(cwd: str | None) -> str | None:
    """The last component of a path (`/home/ann/proj/` → `proj`), as the catalog's `folder` column."""
    if cwd is None:
        return None
    stripped = cwd.rstrip("/\\")
    name = stripped.replace("\\", "/").rsplit("/", 1)[-1]
    return name or None


class CatalogReader:
    """Reads the catalog at `conninfo` as whoever it logs in as, leaving out `machine`'s sessions."""

    def __init__(self, conninfo: str, *, machine: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.conninfo = conninfo
        self.machine = machine
        self._clock = clock
        self._lock = threading.Lock()
        self._connection: Any = None
        self._failed_at: float | None = None
        self._failure: CatalogError | None = None

    # -- the connection --------------------------------------------------------------------

    def _connected(self) -> Any:
        if self._connection is not None and not self._connection.closed:
            return self._connection
        if self._failed_at is not None and self._clock() - self._failed_at < RETRY_AFTER_SECONDS:
            assert self._failure is not None
            raise self._failure
        try:
            connection = connect(self.conninfo)
            with translated(self.conninfo, "opening the catalog"):
                connection.execute(f"SET statement_timeout = {STATEMENT_TIMEOUT_MS}")
                connection.commit()
                check_schema(connection)
        except CatalogError as error:
            self._failed_at, self._failure = self._clock(), error
            raise
        self._failed_at = self._failure = None
        self._connection = connection
        return connection

    def _run(self, doing: str, work: Callable[[Any], Any]) -> Any:
        """`work(connection)` under the lock, errors coded; a lost connection is dropped."""
        with self._lock:
            try:
                with translated(self.conninfo, doing):
                    return work(self._connected())
            except CatalogError as error:
                if error.code == CATALOG_UNREACHABLE:
                    self._forget_connection(error)
                elif self._connection is not None and not self._connection.closed:
                    self._connection.rollback()
                raise

    def _forget_connection(self, error: CatalogError) -> None:
        connection, self._connection = self._connection, None
        self._failed_at, self._failure = self._clock(), error
        if connection is not None:
            with contextlib.suppress(Exception):  # a connection to a dead server: gone either way
                connection.close()

    def cancel(self) -> None:
        """Interrupt the statement running now, if any (its caller gets `CATALOG_TIMED_OUT`)."""
        connection = self._connection
        if connection is not None and not connection.closed:
            with contextlib.suppress(Exception):  # nothing running, or the server is gone
                connection.cancel_safe(timeout=1.0)

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    def whoami(self) -> str:
        """The role this reader is connected as (`current_user`)."""
        return str(self._run("asking who we are", lambda c: c.execute("SELECT current_user").fetchone()[0]))

    # -- discovery -------------------------------------------------------------------------

    def find(self, *, needle: str, cwd: str | None, exclude_id: str, limit: int) -> list[CatalogSession]:
        """Up to `limit` visible sessions of other machines matching `needle` (lower-case), ranked."""
        return list(
            self._run(
                "searching titles",
                lambda c: find_sessions(
                    c,
                    needle=needle,
                    folder=folder_name(cwd),
                    exclude_id=exclude_id,
                    exclude_machine=self.machine,
                    limit=limit,
                ),
            )
        )

    async def search_candidates(
        self, *, exclude_id: str, target_cwd: str | None, needle: str, limit: int
    ) -> Sequence[tuple[SessionRecord, str]]:
        """`CandidateSearch`: up to `limit` (record, label) pairs ranked by (folder rank, recency)."""
        found = await asyncio.to_thread(
            self.find, needle=needle, cwd=target_cwd, exclude_id=exclude_id, limit=limit
        )
        return [(record_of(session), session.title or session.id) for session in found]

    async def list_sessions(self) -> Sequence[SessionRecord]:
        """`SessionQuery`: the newest visible sessions of other machines (at most `LISTED_SESSIONS`)."""
        return await asyncio.to_thread(self.listing)

    def listing(self) -> list[SessionRecord]:
        """The newest visible sessions of other machines, newest first, each id once (its newest copy)."""

        def listed(connection: Any) -> list[SessionRecord]:
            with connection.transaction():
                rows = connection.execute(
                    "SELECT id, cwd, created_at, updated_at"
                    " FROM sessionref.sessions WHERE machine <> %s"
                    f" ORDER BY updated_at DESC, id LIMIT {LISTED_SESSIONS}",
                    (self.machine,),
                ).fetchall()
            unique: dict[str, SessionRecord] = {}
            for session_id, cwd, created, updated in rows:
                unique.setdefault(session_id, SessionRecord(session_id, created, cwd, updated))
            return list(unique.values())

        return list(self._run("listing sessions", listed))

    async def read_titles(self, session_ids: Sequence[str]) -> Mapping[str, str | None]:
        """`SessionQuery`: the titles of the newest copies of `session_ids` (unknown: None)."""
        return await asyncio.to_thread(self.titles, session_ids)

    def titles(self, session_ids: Sequence[str]) -> dict[str, str | None]:
        """The titles of the newest visible copies of `session_ids` (unknown or untitled: None)."""

        def titles(connection: Any) -> dict[str, str | None]:
            with connection.transaction():
                rows = connection.execute(
                    "SELECT DISTINCT ON (id) id, title FROM sessionref.sessions WHERE id = ANY(%s)"
                    " ORDER BY id, updated_at DESC",
                    (list(session_ids),),
                ).fetchall()
            found: dict[str, str | None] = dict.fromkeys(session_ids)
            found.update({session_id: title for session_id, title in rows})
            return found

        if not session_ids:
            return {}
        return dict(self._run("reading titles", titles))

    # -- reading a session -----------------------------------------------------------------

    def describe(self, session_id: str) -> CatalogSession | None:
        """The newest visible copy of `session_id` (any machine), or None."""

        def one(connection: Any) -> CatalogSession | None:
            with connection.transaction():
                row = connection.execute(
                    "SELECT id, machine, owner, title, cwd, created_at, updated_at FROM sessionref.sessions"
                    " WHERE id = %s ORDER BY updated_at DESC LIMIT 1",
                    (session_id,),
                ).fetchone()
            return session_of(row) if row is not None else None

        found: CatalogSession | None = self._run("finding a session", one)
        return found

    def read_copy(self, session_id: str) -> SurfaceSnapshot:
        """The surface of the newest visible copy of `session_id`; `CATALOG_SESSION_NOT_FOUND` if none."""

        def copy(connection: Any) -> SurfaceSnapshot:
            with connection.transaction():
                head = connection.execute(
                    "SELECT key, created_at, cwd, through_seq, format_version FROM sessionref.sessions"
                    " WHERE id = %s ORDER BY updated_at DESC LIMIT 1",
                    (session_id,),
                ).fetchone()
                if head is None:
                    raise CatalogError(
                        CATALOG_SESSION_NOT_FOUND,
                        f"no session {session_id!r} in the catalog that this role may read",
                    )
                rows = connection.execute(
                    "SELECT seq, role, kind, time, text FROM sessionref.messages"
                    " WHERE session_key = %s ORDER BY seq",
                    (head[0],),
                ).fetchall()
            return surface_from_rows(session_id, head[1], head[2], head[3], head[4], rows)

        surface: SurfaceSnapshot = self._run("reading a session", copy)
        return surface

    async def read_surface(self, session_id: str) -> SurfaceSnapshot:
        """`SessionQuery`: the catalog's copy of `session_id` as a surface (see `copies`)."""
        return await asyncio.to_thread(self.read_copy, session_id)

    # -- conversation search ---------------------------------------------------------------

    def search_conversations(
        self, request: ConversationRequest, *, cancel: threading.Event
    ) -> ConversationSearchResult:
        """`ConversationQuery`: sessions of other machines whose published conversation matches."""
        if cancel.is_set():
            return ConversationSearchResult()
        found: ConversationSearchResult = self._run(
            "searching conversations",
            lambda c: search_messages(
                c,
                request.text,
                limit=request.limit,
                exclude_session_id=request.exclude_session_id,
                folder=folder_name(request.cwd),
                exclude_machine=self.machine,
            ),
        )
        return found


def record_of(session: CatalogSession) -> SessionRecord:
    """The discovery record of a catalog session."""
    return SessionRecord(session.id, session.created_at, session.cwd, session.updated_at)
