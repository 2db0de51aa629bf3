"""Applying a batch of session changes to the index in one write transaction.

A session's rows are identified by seq (logs are append-only: a seq always names the same
event). Feeding a whole projection keeps rows whose seq is still there, removes the others
(a compaction replaced them) and adds the new ones; feeding an appended tail only adds rows
past the indexed seqs. Full-text rows are contentless, so removing one gives FTS5 the exact
text it indexed, recomputed from the stored original by the same folding.
"""

from __future__ import annotations

import re
import sqlite3
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sessionref.textsearch.errors import TEXT_SEARCH_INVALID_ARGUMENT, TextSearchError
from sessionref.textsearch.feed import ConversationRow
from sessionref.textsearch.normalize import index_form
from sessionref.textsearch.protocol import SessionChange, SessionRemoved, SessionRows
from sessionref.textsearch.schema import (
    KIND_ASSISTANT,
    KIND_CHECKPOINT,
    KIND_USER,
    create_shard,
    shard_of,
    shard_table,
)

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


def loaded_text(value: str | bytes) -> str:
    """The original text back from `stored_text`."""
    return value if isinstance(value, str) else value.decode("utf-8", "surrogatepass")


def indexed_body(text: str) -> str:
    """What the full-text shard is given for `text` (lone surrogates become separators)."""
    if not text.isascii() and _SURROGATE.search(text) is not None:
        text = _SURROGATE.sub(" ", text)
    return index_form(text)


def validate(change: SessionChange) -> None:
    """Raise `TEXT_SEARCH_INVALID_ARGUMENT` for a change that is not a session id with projected rows."""
    if not isinstance(change, SessionRows | SessionRemoved):
        raise TextSearchError(TEXT_SEARCH_INVALID_ARGUMENT, f"not a session change: {type(change).__name__}")
    if not isinstance(change.session_id, str) or not change.session_id:
        raise TextSearchError(TEXT_SEARCH_INVALID_ARGUMENT, "a session id must be a non-empty string")
    if isinstance(change, SessionRemoved):
        return
    seen: set[int] = set()
    for row in change.rows:
        if (
            not isinstance(row, ConversationRow)
            or type(row.seq) is not int
            or row.role not in ("user", "assistant")
            or not isinstance(row.text, str)
            or type(row.time) is not int
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


def _chunks(values: Sequence[int], size: int = 900) -> Iterable[Sequence[int]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


class BatchWriter:
    """Writes one batch of changes on a connection inside a transaction the caller opened."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection
        self.report = BatchReport()
        meta = dict(connection.execute("SELECT key, value FROM meta WHERE key IN ('next_id', 'rows')"))
        self.next_id = int(meta["next_id"])
        self.rows = int(meta["rows"])
        self._inserts: list[tuple[int, int, int, int, int]] = []
        self._texts: list[tuple[int, str | bytes]] = []
        self._bodies: dict[int, list[tuple[int, str]]] = defaultdict(list)
        self._shards: set[int] = {
            int(name.removeprefix("words_"))
            for (name,) in connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'words_[0-9]*' "
                "AND name NOT GLOB 'words_*_*'"
            )
        }

    def _session_keys(self, session_ids: list[str]) -> dict[str, tuple[int, int, bool]]:
        """(key, message count, existed) per session id, creating missing sessions."""
        found: dict[str, tuple[int, int, bool]] = {}
        for start in range(0, len(session_ids), 900):
            chunk = session_ids[start : start + 900]
            marks = ",".join("?" * len(chunk))
            for key, session_id, messages in self.connection.execute(
                f"SELECT key, session_id, messages FROM sessions WHERE session_id IN ({marks})", chunk
            ):
                found[session_id] = (key, messages, True)
        for session_id in session_ids:
            if session_id not in found:
                cursor = self.connection.execute(
                    "INSERT INTO sessions (session_id) VALUES (?)", (session_id,)
                )
                found[session_id] = (int(cursor.lastrowid or 0), 0, False)
        return found

    def apply(self, changes: Sequence[SessionChange]) -> BatchReport:
        """Apply `changes` (already validated); the caller commits."""
        latest: dict[str, SessionChange] = {}
        for change in changes:  # several changes of one session fold into one, in order
            previous = latest.pop(change.session_id, None)
            if isinstance(change, SessionRows) and change.appended and previous is not None:
                if isinstance(previous, SessionRows):
                    known = {row.seq for row in previous.rows}
                    rows = [*previous.rows, *(row for row in change.rows if row.seq not in known)]
                    change = SessionRows(
                        change.session_id, rows, change.through_seq, change.source, previous.appended
                    )
                else:  # rows appended to a removed session are all it has
                    change = SessionRows(change.session_id, change.rows, change.through_seq, change.source)
            latest[change.session_id] = change
        keys = self._session_keys(list(latest))
        for session_id, change in latest.items():
            key, messages, existed = keys[session_id]
            if isinstance(change, SessionRemoved):
                if existed:
                    self._delete_ids([row_id for row_id, _ in self._existing(key)])
                self.connection.execute("DELETE FROM sessions WHERE key = ?", (key,))
                continue
            rows = change.rows
            if existed:
                existing = dict((seq, row_id) for row_id, seq in self._existing(key))
                if change.appended:
                    top = max(existing, default=None)
                    rows = [row for row in rows if top is None or row.seq > top]
                else:
                    wanted = {row.seq for row in rows}
                    gone = [row_id for seq, row_id in existing.items() if seq not in wanted]
                    self._delete_ids(gone)
                    messages -= len(gone)
                    rows = [row for row in rows if row.seq not in existing]
            for row in rows:
                self._insert(key, row)
            messages += len(rows)
            self.connection.execute(
                "UPDATE sessions SET through_seq = ?, source = ?, messages = ? WHERE key = ?",
                (change.through_seq, change.source, messages, key),
            )
        self._flush()
        return self.report

    def _existing(self, key: int) -> list[tuple[int, int]]:
        return self.connection.execute("SELECT id, seq FROM messages WHERE session = ?", (key,)).fetchall()

    def _insert(self, key: int, row: ConversationRow) -> None:
        row_id = self.next_id
        self.next_id += 1
        self._inserts.append((row_id, key, row.seq, row_kind(row), row.time))
        self._texts.append((row_id, stored_text(row.text)))
        self._bodies[shard_of(row_id)].append((row_id, indexed_body(row.text)))

    def _delete_ids(self, row_ids: list[int]) -> None:
        if not row_ids:
            return
        self._flush()  # pending inserts first, so ids are deleted from where they are
        for chunk in _chunks(sorted(row_ids)):
            marks = ",".join("?" * len(chunk))
            texts = self.connection.execute(
                f"SELECT id, text FROM message_texts WHERE id IN ({marks})", list(chunk)
            ).fetchall()
            by_shard: dict[int, list[tuple[int, str]]] = defaultdict(list)
            for row_id, value in texts:
                by_shard[shard_of(row_id)].append((row_id, indexed_body(loaded_text(value))))
            for shard, bodies in by_shard.items():
                table = shard_table(shard)
                self.connection.executemany(
                    f"INSERT INTO {table}({table}, rowid, body) VALUES ('delete', ?, ?)", bodies
                )
            self.connection.execute(f"DELETE FROM messages WHERE id IN ({marks})", list(chunk))
            self.connection.execute(f"DELETE FROM message_texts WHERE id IN ({marks})", list(chunk))
        self.report.deleted += len(row_ids)
        self.rows -= len(row_ids)

    def _flush(self) -> None:
        if self._inserts:
            self.connection.executemany("INSERT INTO messages VALUES (?, ?, ?, ?, ?)", self._inserts)
            self.connection.executemany("INSERT INTO message_texts VALUES (?, ?)", self._texts)
            for shard, bodies in sorted(self._bodies.items()):
                if shard not in self._shards:
                    create_shard(self.connection, shard)
                    self._shards.add(shard)
                table = shard_table(shard)
                self.connection.executemany(f"INSERT INTO {table}(rowid, body) VALUES (?, ?)", bodies)
            self.report.inserted += len(self._inserts)
            self.rows += len(self._inserts)
            self._inserts, self._texts = [], []
            self._bodies = defaultdict(list)
        self.connection.executemany(
            "UPDATE meta SET value = ? WHERE key = ?",
            [(str(self.next_id), "next_id"), (str(self.rows), "rows")],
        )
