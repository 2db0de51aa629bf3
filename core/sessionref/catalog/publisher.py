"""Publishing: this machine's sessions into the catalog, as snapshot projections, incrementally.

What leaves the machine is exactly what a snapshot of the session would show: the rows of
`sessionref.service.conversation_rows.conversation_rows` (the projection the text index and every snapshot
use: a person's text, the assistant's text, compaction checkpoints; never tool calls or output,
reasoning or injected context), each through `redact_secrets`, plus the session's facts (id,
title, cwd, source, machine, times). Nothing is published unless asked for (`sources` chooses).

Incremental and idempotent: a session is sent again only when its last activity or title
changed since the catalog's copy (the catalog keeps both), and a message is keyed by
(session, seq), so sending it twice stores it once. Sessions go in batches, one transaction each,
with the session's facts written in the same transaction as its messages: a publish killed at any
point leaves each session either fully at its new state or at its old one, and the next publish
resumes with exactly the sessions still out of date.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from sessionref.catalog.connection import connect, translated
from sessionref.catalog.errors import CatalogError
from sessionref.catalog.redaction import redact_secrets
from sessionref.catalog.schema import check_schema
from sessionref.contract.context_message import captured_format_version
from sessionref.service.conversation_rows import conversation_rows
from sessionref.service.protocols import SessionRecord, SurfaceSnapshot
from sessionref.sources import SOURCE_KINDS, source_kind_of

STORE_SOURCE: Final = "store"
"""The source name of the store's own sessions (`[catalog] publish = ["store", …]`)."""
PUBLISHABLE_SOURCES: Final = (STORE_SOURCE, *SOURCE_KINDS)
"""Every source a session may be published from."""
BATCH_MESSAGES: Final = 20_000
"""Messages per transaction: large enough that a transaction's cost is spread, small enough that
a crash loses little work."""
BATCH_SESSIONS: Final = 500
"""Sessions per transaction, at most (many small sessions)."""
WATCH_INTERVAL_SECONDS: Final = 5.0
"""How often `publish --watch` looks for changed sessions."""
BACKOFF_SECONDS: Final = (1.0, 2.0, 5.0, 10.0, 30.0, 60.0)
"""Waits between attempts while the catalog is unreachable (the last one repeats)."""


class PublishableStore(Protocol):
    """What the publisher reads from a store: its listing, each session's surface and its title."""

    async def list_sessions(self) -> Sequence[SessionRecord]:
        """All sessions, most recent first."""
        ...

    async def read_surface(self, session_id: str) -> SurfaceSnapshot:
        """The folded surface of one session."""
        ...

    async def read_titles(self, session_ids: Sequence[str]) -> Mapping[str, str | None]:
        """Titles by id (no log read)."""
        ...


def source_of(session_id: str) -> str:
    """The source name a session is published under: `store`, or the other agent's source kind."""
    return source_kind_of(session_id) or STORE_SOURCE


@dataclass(frozen=True, slots=True)
class PreparedSession:
    """One session as it is published: its facts and its redacted projected rows."""

    record: SessionRecord
    title: str | None
    source: str
    through_seq: int | None
    format_version: int
    """The source log's format generation (`session.version`): a capture reports it."""
    rows: tuple[tuple[int, str, str, int, str], ...]
    """`(seq, role, kind, time, text)` per projected message, text already redacted."""


@dataclass(slots=True)
class PublishReport:
    """What one publish did: sessions sent, messages sent, sessions already current, sessions skipped."""

    sessions: int = 0
    messages: int = 0
    unchanged: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)
    """`(session id, code: message)` of each session that could not be read locally."""
    seconds: float = 0.0


def prepare_session(record: SessionRecord, title: str | None, surface: SurfaceSnapshot) -> PreparedSession:
    """The published form of one session: the snapshot projection, redacted, with its facts."""
    rows = tuple(
        (row.seq, row.role, "checkpoint" if row.checkpoint else "message", row.time, redact_secrets(row.text))
        for row in conversation_rows(surface)
    )
    shown_title = redact_secrets(title) if title else None
    through = surface["capturedThroughSeq"]
    version = captured_format_version(surface)
    return PreparedSession(record, shown_title, source_of(record.id), through, version, rows)


def _marker(record: SessionRecord, title: str | None) -> tuple[int, str | None]:
    return (record.last_activity, redact_secrets(title) if title else None)


class Publisher:
    """Publishes one store's chosen sources to the catalog at `conninfo` as machine `machine`.

    `sources` names what may leave the machine (`store` or registered source kinds); a
    session of any other source is never read. One connection, opened on first use and reopened
    after a failure.
    """

    def __init__(
        self, conninfo: str, store: PublishableStore, *, machine: str, sources: Sequence[str]
    ) -> None:
        self.conninfo = conninfo
        self.store = store
        self.machine = machine
        self.sources = tuple(sources)
        self._connection: Any = None

    def _connected(self) -> Any:
        if self._connection is None or self._connection.closed:
            connection = connect(self.conninfo)
            try:
                check_schema(connection)
            except BaseException:
                connection.close()
                raise
            self._connection = connection
        return self._connection

    def close(self) -> None:
        """Close the connection (a later publish opens a new one)."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def _drop_connection(self) -> None:
        try:
            self.close()
        except Exception:  # a connection to a dead server may fail to close: it is gone either way
            self._connection = None

    def published_markers(self) -> dict[str, tuple[int, str | None]]:
        """`{session id: (last activity, title)}` of what this role published from this machine."""
        with translated(self.conninfo, "reading what was published"):
            connection = self._connected()
            with connection.transaction(), connection.cursor() as cursor:
                cursor.execute(
                    "SELECT id, updated_at, title FROM sessionref.sessions"
                    " WHERE owner = current_user AND machine = %s",
                    (self.machine,),
                )
                return {row[0]: (row[1], row[2]) for row in cursor.fetchall()}

    async def _chosen(self, only: Sequence[str]) -> list[SessionRecord]:
        """The store's sessions of the chosen sources (only the ids in `only`, when given)."""
        return [
            record
            for record in await self.store.list_sessions()
            if source_of(record.id) in self.sources and (not only or record.id in only)
        ]

    async def pending(self, only: Sequence[str] = ()) -> list[tuple[SessionRecord, str | None]]:
        """The chosen sessions whose catalog copy is missing or out of date, with their titles."""
        return await self._pending(await self._chosen(only))

    async def _pending(self, chosen: Sequence[SessionRecord]) -> list[tuple[SessionRecord, str | None]]:
        titles = await self.store.read_titles([record.id for record in chosen]) if chosen else {}
        markers = await asyncio.to_thread(self.published_markers)
        return [
            (record, titles.get(record.id))
            for record in chosen
            if markers.get(record.id) != _marker(record, titles.get(record.id))
        ]

    async def publish(
        self, only: Sequence[str] = (), *, progress: Callable[[int, int], None] | None = None
    ) -> PublishReport:
        """Send every chosen session that changed (or only the ids in `only`); what was done.

        Raises `CatalogError` when the catalog fails (what was committed before stays committed;
        publishing again resumes).
        """
        started = time.monotonic()
        report = PublishReport()
        chosen = await self._chosen(only)
        todo = await self._pending(chosen)
        report.unchanged = len(chosen) - len(todo)
        batch: list[PreparedSession] = []
        batch_messages = 0
        for record, title in todo:
            try:
                surface = await self.store.read_surface(record.id)
                prepared = await asyncio.to_thread(prepare_session, record, title, surface)
            except CatalogError:
                raise
            except Exception as error:  # an unreadable local session is skipped and reported
                code = getattr(error, "code", type(error).__name__)
                report.failed.append((record.id, f"{code}: {getattr(error, 'message', error)}"))
                continue
            batch.append(prepared)
            batch_messages += len(prepared.rows)
            if batch_messages >= BATCH_MESSAGES or len(batch) >= BATCH_SESSIONS:
                await asyncio.to_thread(self._write, batch)
                report.sessions += len(batch)
                report.messages += batch_messages
                if progress is not None:
                    progress(report.sessions, len(todo))
                batch, batch_messages = [], 0
        if batch:
            await asyncio.to_thread(self._write, batch)
            report.sessions += len(batch)
            report.messages += batch_messages
            if progress is not None:
                progress(report.sessions, len(todo))
        report.seconds = time.monotonic() - started
        return report

    def _write(self, batch: Sequence[PreparedSession]) -> None:
        """One transaction: every session's facts and messages of `batch`, stale messages removed."""
        try:
            with translated(self.conninfo, "publishing"):
                write_batch(self._connected(), self.machine, batch)
        except CatalogError as error:
            if error.is_connection_failure:
                self._drop_connection()
            raise

    async def watch(
        self,
        stop: asyncio.Event,
        *,
        interval: float = WATCH_INTERVAL_SECONDS,
        on_report: Callable[[PublishReport], None] | None = None,
        on_error: Callable[[CatalogError, float], None] | None = None,
    ) -> None:
        """Publish now, then every `interval` seconds until `stop` is set; retry with backoff.

        While the catalog is unreachable each attempt waits longer (`BACKOFF_SECONDS`);
        `on_error(error, wait)` hears of each failure. Other coded errors (a refused login, a
        newer schema) end the loop: waiting does not fix them.
        """
        failures = 0
        while not stop.is_set():
            try:
                report = await self.publish()
            except CatalogError as error:
                if not error.is_connection_failure:
                    raise
                self._drop_connection()
                wait = BACKOFF_SECONDS[min(failures, len(BACKOFF_SECONDS) - 1)]
                failures += 1
                if on_error is not None:
                    on_error(error, wait)
            else:
                failures = 0
                wait = interval
                if on_report is not None:
                    on_report(report)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=wait)


_STAGE: Final = (
    "CREATE TEMP TABLE IF NOT EXISTS sessionref_staged_messages ("
    " session_key bigint, seq bigint, role text, kind text, time bigint, text text)"
    " ON COMMIT DELETE ROWS"
)


def write_batch(connection: Any, machine: str, batch: Sequence[PreparedSession]) -> None:
    """Write `batch` as one transaction on `connection` (idempotent: keyed by session and seq)."""
    with connection.transaction(), connection.cursor() as cursor:
        cursor.execute(_STAGE)
        keys: list[int] = []
        for item in batch:
            record = item.record
            cursor.execute(
                "INSERT INTO sessionref.sessions AS s"
                " (id, machine, source, title, cwd, created_at, updated_at, through_seq, format_version,"
                " messages)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (owner, machine, id) DO UPDATE SET"
                " source = excluded.source, title = excluded.title, cwd = excluded.cwd,"
                " created_at = excluded.created_at, updated_at = excluded.updated_at,"
                " through_seq = excluded.through_seq, format_version = excluded.format_version,"
                " messages = excluded.messages, published_at = now()"
                " RETURNING key",
                (
                    record.id,
                    machine,
                    item.source,
                    item.title,
                    record.cwd,
                    record.created_at,
                    record.last_activity,
                    item.through_seq,
                    item.format_version,
                    len(item.rows),
                ),
            )
            keys.append(cursor.fetchone()[0])
        with cursor.copy(
            "COPY sessionref_staged_messages (session_key, seq, role, kind, time, text) FROM STDIN"
        ) as copy:
            for key, item in zip(keys, batch, strict=True):
                for seq, role, kind, at, text in item.rows:
                    copy.write_row((key, seq, role, kind, at, text.replace("\x00", "\ufffd")))
        cursor.execute(
            "DELETE FROM sessionref.messages m WHERE m.session_key = ANY(%s) AND NOT EXISTS"
            " (SELECT 1 FROM sessionref_staged_messages st"
            " WHERE st.session_key = m.session_key AND st.seq = m.seq)",
            (keys,),
        )
        cursor.execute(
            "INSERT INTO sessionref.messages AS m (session_key, seq, role, kind, time, text)"
            " SELECT session_key, seq, role, kind, time, text FROM sessionref_staged_messages"
            " ON CONFLICT (session_key, seq) DO UPDATE SET"
            " role = excluded.role, kind = excluded.kind, time = excluded.time, text = excluded.text"
            " WHERE (m.role, m.kind, m.time, m.text) IS DISTINCT FROM"
            " (excluded.role, excluded.kind, excluded.time, excluded.text)"
        )
