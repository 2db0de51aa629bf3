"""Applying a batch of session changes to the index in one write transaction.

A session's rows are identified by seq (logs are append-only: a seq always names the same
event). Feeding a whole projection keeps rows whose seq is still there, removes the others
(a compaction replaced them) and adds the new ones; feeding an appended tail only adds rows
past the indexed seqs. Full-text rows are contentless, so removing one gives FTS5 the exact
text it indexed, recomputed from the stored original by the same folding.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from sessionref.service.conversation_rows import ConversationRow
from sessionref.textsearch.errors import TEXT_SEARCH_INVALID_ARGUMENT, TextSearchError
from sessionref.textsearch.normalize import index_form
from sessionref.textsearch.protocol import SessionChange, SessionRemoved, SessionRows
from sessionref.textsearch.schema import (
    FTS_AUTOMERGE,
    KIND_ASSISTANT,
    KIND_CHECKPOINT,
    KIND_USER,
    create_shard,
    list_shards,
    shard_of,
    shard_range,
    shard_table,
)
from sessionref.textsearch.word_lists import drop_lists

_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(slots=True)
class BatchReport:
    """Counts of one applied batch."""

    inserted: int = 0
    deleted: int = 0


def row_kind(row: ConversationRow) -> int:
    """The stored kind of a row (user, assistant or checkpoint)."""
    if row.checkpoint:
        return KIND_CHECKPOINT
    return KIND_ASSISTANT if row.role == "assistant" else KIND_USER


def stored_text(text: str) -> str | bytes:
    """Text as stored: a str, or UTF-8 bytes with surrogates kept when it holds lone surrogates."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-8", "surrogatepass")


def _json_safe(text: str) -> bool:
    """True when `text` survives a trip through SQLite's JSON functions (no NUL, no lone surrogate)."""
    return "\x00" not in text and (text.isascii() or _SURROGATE.search(text) is None)


def loaded_text(value: str | bytes) -> str:
    """The original text back from `stored_text`."""
    return value if isinstance(value, str) else value.decode("utf-8", "surrogatepass")


def indexed_body(text: str) -> str:
    """What the full-text shard is given for `text` (NULs and lone surrogates become separators)."""
    if "\x00" in text:
        text = text.replace("\x00", " ")
    if not text.isascii() and _SURROGATE.search(text) is not None:
        text = _SURROGATE.sub(" ", text)
    return index_form(text)


def validate(change: SessionChange) -> None:
    """Raise `TEXT_SEARCH_INVALID_ARGUMENT` for a change that is not a session id with projected rows."""
    if not isinstance(change, SessionRows | SessionRemoved):
        raise TextSearchError(TEXT_SEARCH_INVALID_ARGUMENT, f"not a session change: {type(change).__name__}")
    if not isinstance(change.session_id, str) or not change.session_id or not _json_safe(change.session_id):
        raise TextSearchError(
            TEXT_SEARCH_INVALID_ARGUMENT,
            "a session id must be a non-empty string without NUL or lone surrogates",
        )
    if isinstance(change, SessionRemoved):
        return
    if not isinstance(change.source, str) or not _json_safe(change.source):
        raise TextSearchError(TEXT_SEARCH_INVALID_ARGUMENT, "a source note must be a string without NUL")
    if change.through_seq is not None and type(change.through_seq) is not int:
        raise TextSearchError(TEXT_SEARCH_INVALID_ARGUMENT, "through_seq must be an integer or None")
    seen: set[int] = set()
    for row in change.rows:
        if (
            not isinstance(row, ConversationRow)
            or type(row.seq) is not int
            or row.role not in ("user", "assistant")
            or not isinstance(row.text, str)
            or type(row.time) is not int
            or not -(2**63) <= row.time < 2**63
            or not -(2**63) <= row.seq < 2**63
        ):
            raise TextSearchError(
                TEXT_SEARCH_INVALID_ARGUMENT,
                f'session "{change.session_id}": a row is not a projected message',
            )
        if row.seq in seen:
            raise TextSearchError(
                TEXT_SEARCH_INVALID_ARGUMENT, f'session "{change.session_id}": seq {row.seq} appears twice'
            )
        seen.add(row.seq)


@dataclass(frozen=True, slots=True)
class PreparedChange:
    """A change with the index form of its non-ASCII texts computed (by the caller's thread)."""

    change: SessionChange
    bodies: dict[int, str]  # seq -> what FTS5 indexes, for rows whose text is not ASCII


def prepare(change: SessionChange) -> PreparedChange:
    """Validate `change` and fold its non-ASCII texts (pure; runs while the previous batch is written)."""
    validate(change)
    if isinstance(change, SessionRemoved):
        return PreparedChange(change, {})
    return PreparedChange(
        change, {row.seq: indexed_body(row.text) for row in change.rows if not row.text.isascii()}
    )


def _json(values: object) -> str:
    return json.dumps(values, ensure_ascii=False, separators=(",", ":"))


def _merge(changes: Sequence[PreparedChange]) -> dict[str, PreparedChange]:
    """One change per session: later changes of a session fold into earlier ones, in order."""
    latest: dict[str, PreparedChange] = {}
    for prepared in changes:
        change = prepared.change
        previous = latest.pop(change.session_id, None)
        if isinstance(change, SessionRows) and change.appended and previous is not None:
            earlier = previous.change
            if isinstance(earlier, SessionRows):
                known = {row.seq for row in earlier.rows}
                rows = [*earlier.rows, *(row for row in change.rows if row.seq not in known)]
                change = SessionRows(
                    change.session_id, rows, change.through_seq, change.source, earlier.appended
                )
            else:  # rows appended to a removed session are all it has
                change = SessionRows(change.session_id, change.rows, change.through_seq, change.source)
            prepared = PreparedChange(change, {**previous.bodies, **prepared.bodies})
        latest[change.session_id] = prepared
    return latest


class BatchWriter:
    """Writes one batch of changes on a connection inside a transaction the caller opened.

    Every write is one set-based statement over a JSON payload (`json_each`), not a statement per
    row: SQLite then does a batch's indexing in a few long calls that run without the GIL, so the
    thread reading the next logs keeps its core.
    """

    def __init__(self, connection: sqlite3.Connection, *, automerge: int = FTS_AUTOMERGE) -> None:
        self.connection = connection
        self.automerge = automerge
        self.report = BatchReport()
        self.written_shards: set[int] = set()
        meta = dict(connection.execute("SELECT key, value FROM meta WHERE key IN ('next_id', 'rows')"))
        self.next_id = int(meta["next_id"])
        self.rows = int(meta["rows"])
        self._shards = set(list_shards(connection))
        connection.execute(
            "CREATE TEMP TABLE IF NOT EXISTS pending_bodies (id INTEGER PRIMARY KEY, body TEXT NOT NULL)"
        )

    def _session_keys(self, session_ids: list[str]) -> dict[str, tuple[int, int]]:
        """(key, indexed message count) per session id, creating missing sessions."""
        payload = _json(session_ids)
        self.connection.execute(
            "INSERT OR IGNORE INTO sessions (session_id) SELECT value FROM json_each(?)", (payload,)
        )
        found = self.connection.execute(
            "SELECT session_id, key, messages FROM sessions "
            "WHERE session_id IN (SELECT value FROM json_each(?))",
            (payload,),
        )
        return {session_id: (key, messages) for session_id, key, messages in found}

    def _existing(self, keys: list[int]) -> dict[int, dict[int, int]]:
        """seq -> row id of the indexed rows of each session key."""
        existing: dict[int, dict[int, int]] = {key: {} for key in keys}
        if keys:
            for session, row_id, seq in self.connection.execute(
                "SELECT session, id, seq FROM messages WHERE session IN (SELECT value FROM json_each(?))",
                (_json(keys),),
            ):
                existing[session][seq] = row_id
        return existing

    def apply(self, changes: Sequence[PreparedChange]) -> BatchReport:
        """Apply `changes` (prepared); the caller commits."""
        latest = _merge(changes)
        keys = self._session_keys(list(latest))
        existing = self._existing([key for key, messages in keys.values() if messages > 0])
        gone: list[int] = []
        removed: list[int] = []
        inserts: list[tuple[int, ConversationRow, str | None]] = []
        counts: list[tuple[int, int | None, str, int]] = []
        for session_id, prepared in latest.items():
            key, messages = keys[session_id]
            indexed = existing.get(key, {})
            change = prepared.change
            if isinstance(change, SessionRemoved):
                gone += indexed.values()
                removed.append(key)
                continue
            rows = change.rows
            if change.appended:
                top = max(indexed, default=None)
                rows = [row for row in rows if top is None or row.seq > top]
            else:
                wanted = {row.seq for row in rows}
                dropped = [row_id for seq, row_id in indexed.items() if seq not in wanted]
                gone += dropped
                messages -= len(dropped)
                rows = [row for row in rows if row.seq not in indexed]
            # Rows enter in conversation order, so within a session a higher row id is always a later
            # message, however the index was built: ties on relevance go to the same message.
            rows = sorted(rows, key=lambda row: row.seq)
            inserts += [(key, row, prepared.bodies.get(row.seq)) for row in rows]
            counts.append((key, change.through_seq, change.source, messages + len(rows)))
        self._delete_rows(gone)
        self._insert_rows(inserts)
        connection = self.connection
        if removed:
            connection.execute(
                "DELETE FROM sessions WHERE key IN (SELECT value FROM json_each(?))", (_json(removed),)
            )
            # Their row ids are gone for good: a later reader maps them to the run before, harmlessly.
            connection.execute(
                "DELETE FROM session_runs WHERE session IN (SELECT value FROM json_each(?))",
                (_json(removed),),
            )
        if counts:
            connection.execute(
                "UPDATE sessions SET through_seq = j.value ->> 1, source = j.value ->> 2, "
                "messages = j.value ->> 3 FROM json_each(?) AS j WHERE sessions.key = j.value ->> 0",
                (_json(counts),),
            )
        connection.executemany(
            "UPDATE meta SET value = ? WHERE key = ?",
            [(str(self.next_id), "next_id"), (str(self.rows), "rows")],
        )
        return self.report

    def _delete_rows(self, row_ids: list[int]) -> None:
        if not row_ids:
            return
        connection = self.connection
        payload = _json(sorted(row_ids))
        texts = connection.execute(
            "SELECT id, text FROM message_texts WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id",
            (payload,),
        ).fetchall()
        by_shard: dict[int, list[tuple[int, str]]] = defaultdict(list)
        for row_id, value in texts:
            by_shard[shard_of(row_id)].append((row_id, indexed_body(loaded_text(value))))
        for shard, bodies in by_shard.items():
            table = shard_table(shard)
            connection.execute(
                f"INSERT INTO {table}({table}, rowid, body) "
                "SELECT 'delete', value ->> 0, value ->> 1 FROM json_each(?)",
                (_json(bodies),),
            )
        # The shards' bm25 statistics changed: their lists no longer hold their best messages.
        drop_lists(connection, by_shard)
        connection.execute("DELETE FROM messages WHERE id IN (SELECT value FROM json_each(?))", (payload,))
        connection.execute(
            "DELETE FROM message_texts WHERE id IN (SELECT value FROM json_each(?))", (payload,)
        )
        self.report.deleted += len(row_ids)
        self.rows -= len(row_ids)

    def _insert_rows(self, inserts: list[tuple[int, ConversationRow, str | None]]) -> None:
        if not inserts:
            return
        connection = self.connection
        first = self.next_id
        last = first + len(inserts) - 1
        self.next_id = last + 1
        connection.execute(
            "INSERT INTO messages (id, session, seq, kind, time) "
            "SELECT ?1 + key, value ->> 0, value ->> 1, value ->> 2, value ->> 3 FROM json_each(?2)",
            (first, _json([(key, row.seq, row_kind(row), row.time) for key, row, _ in inserts])),
        )
        runs = [
            (first + offset, key)
            for offset, (key, _, _) in enumerate(inserts)
            if offset == 0 or inserts[offset - 1][0] != key
        ]
        connection.execute(
            "INSERT INTO session_runs (first_id, session) SELECT value ->> 0, value ->> 1 FROM json_each(?)",
            (_json(runs),),
        )
        texts: list[str | None] = []
        odd: list[tuple[int, str | bytes]] = []
        bodies: list[tuple[int, str]] = []
        for offset, (_, row, body) in enumerate(inserts):
            if _json_safe(row.text):
                texts.append(row.text)
            else:  # bound directly: JSON would cut it at a NUL or lose a lone surrogate
                texts.append(None)
                odd.append((first + offset, stored_text(row.text)))
            if body is not None:
                bodies.append((first + offset, body))
        connection.execute(
            "INSERT INTO message_texts (id, text) "
            "SELECT ?1 + key, value FROM json_each(?2) WHERE value IS NOT NULL",
            (first, _json(texts)),
        )
        if odd:
            connection.executemany("INSERT INTO message_texts (id, text) VALUES (?, ?)", odd)
        if bodies:
            connection.execute(
                "INSERT INTO temp.pending_bodies (id, body) "
                "SELECT value ->> 0, value ->> 1 FROM json_each(?)",
                (_json(bodies),),
            )
        for shard in range(shard_of(first), shard_of(last) + 1):
            if shard not in self._shards:
                create_shard(connection, shard, self.automerge)
                self._shards.add(shard)
            self.written_shards.add(shard)
            table = shard_table(shard)
            # One statement in row id order: FTS5 appends to its in-memory postings without flushing.
            low, high = shard_range(shard)
            connection.execute(
                f"INSERT INTO {table}(rowid, body) SELECT t.id, coalesce(b.body, t.text) "
                "FROM message_texts AS t LEFT JOIN temp.pending_bodies AS b ON b.id = t.id "
                "WHERE t.id BETWEEN ? AND ? ORDER BY t.id",
                (max(first, low), min(last, high)),
            )
        if bodies:
            connection.execute("DELETE FROM temp.pending_bodies")
        self.report.inserted += len(inserts)
        self.rows += len(inserts)
