"""`TextIndex`: the SQLite FTS5 conversation index (implements `ConversationSearch`).

Two connections to one WAL file: searches read on one while updates write on the other, so a
catch-up never blocks a keystroke. Searches are serialised among themselves (one at a time,
each cancellable mid-statement: a progress handler polls its `SearchCancellation`), updates too.
`update` batches changes into transactions of about `BATCH_ROWS` messages and writes a batch
on a worker thread while the caller prepares the next one (reading logs and indexing overlap
on two cores). A damaged file found at any point is deleted and recreated empty
(`rebuilt`, `resets`): `indexed()` is then empty and the caller feeds everything again. A file
another process replaced is followed.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from sessionref.textsearch.errors import (
    TEXT_SEARCH_CANCELLED,
    TEXT_SEARCH_CLOSED,
    TEXT_SEARCH_INVALID_ARGUMENT,
    TEXT_SEARCH_UNAVAILABLE,
    TextSearchError,
)
from sessionref.textsearch.feed import ConversationRow
from sessionref.textsearch.protocol import (
    ConversationResults,
    FactsProvider,
    IndexedSession,
    Progress,
    SearchCancellation,
    SessionChange,
    SessionRows,
    UpdateReport,
)
from sessionref.textsearch.query import parse_query
from sessionref.textsearch.schema import (
    FTS_AUTOMERGE,
    KIND_ASSISTANT,
    KIND_CHECKPOINT,
    connect,
    ensure_fts5,
    is_damage,
    list_shards,
    open_index_file,
    remove_files,
    shard_of,
    shard_table,
)
from sessionref.textsearch.search import Searcher
from sessionref.textsearch.writer import BatchWriter, PreparedChange, loaded_text, prepare

log = logging.getLogger("sessionref.textsearch")
T = TypeVar("T")

# Messages per write transaction (and per progress report) during `update`: larger batches mean
# fewer FTS5 segments and fewer hand-overs between the threads (30k sessions: 20k rows 42.5 s,
# 60k rows 38.8 s); a batch of 50k messages holds about 35 MB of text in memory.
BATCH_ROWS = 50_000
# Sessions per write transaction at most (a catch-up of many small changes still commits often).
BATCH_SESSIONS = 2_000
# The most results one search may ask for.
MAX_LIMIT = 500
# A running search polls its cancellation every this many SQLite virtual-machine steps.
PROGRESS_OPS = 1000


def _file_identity(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


@dataclass
class _Bulk:
    """Shards a bulk update wrote to, and those already merged."""

    written: set[int] = field(default_factory=set)
    optimized: set[int] = field(default_factory=set)


def _batches(changes: Iterable[SessionChange]) -> Iterator[list[PreparedChange]]:
    batch: list[PreparedChange] = []
    rows = 0
    for change in changes:
        batch.append(prepare(change))
        rows += len(change.rows) if isinstance(change, SessionRows) else 1
        if rows >= BATCH_ROWS or len(batch) >= BATCH_SESSIONS:
            yield batch
            batch, rows = [], 0
    if batch:
        yield batch


class TextIndex:
    """The conversation index stored at `path` (created when missing, recreated when damaged).

    `verify=True` runs `PRAGMA quick_check` on open (about 1.5 s for a 2.6 GB index); a damaged
    file is also detected by any later SQLite error saying so. Raises `TEXT_SEARCH_UNAVAILABLE`
    when this Python's SQLite has no FTS5 or the file can be neither opened nor created.
    """

    def __init__(self, path: str | Path, *, verify: bool = True) -> None:
        ensure_fts5()
        self.path = Path(path)
        self._write_lock = threading.Lock()
        self._read_lock = threading.Lock()
        self._closed = False
        self.resets = 0
        self._writer, self.rebuilt = open_index_file(self.path, verify=verify)
        self._connect()

    def _connect(self) -> None:
        """Open the search connection beside the writer and note which file both are on."""
        self._identity = _file_identity(self.path)
        self._reader = connect(self.path, reader=True)
        self._searcher = Searcher(self._reader)
        try:
            self._searcher.warm()
        except sqlite3.Error as error:  # a damaged file is handled by the first search
            log.warning("cannot preload the conversation index %s: %s", self.path, error)

    # -- lifecycle -----------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise TextSearchError(TEXT_SEARCH_CLOSED, "the conversation index is closed")

    def _reset(self, error: sqlite3.Error) -> None:
        """Replace a damaged file by an empty index (takes both locks: write, then read)."""
        with self._write_lock, self._read_lock:
            if self._closed:
                return
            log.warning(
                "the conversation index %s is damaged (%s): starting it again empty", self.path, error
            )
            self._writer.close()
            self._reader.close()
            remove_files(self.path)
            self._writer, _ = open_index_file(self.path, verify=False)
            self._connect()
            self.rebuilt = True
            self.resets += 1

    def _follow_file(self) -> None:
        """Reopen when another process replaced the file (it found it damaged and started it again).

        Connections keep the replaced file open: without this, this process would go on reading
        and writing a deleted file. One `stat` per call.
        """
        if _file_identity(self.path) == self._identity:
            return
        with self._write_lock, self._read_lock:
            if self._closed or _file_identity(self.path) == self._identity:
                return
            log.warning("the conversation index %s was replaced by another process: reopening", self.path)
            self._writer.close()
            self._reader.close()
            self._writer, _ = open_index_file(self.path, verify=False)
            self._connect()
            self.rebuilt = True

    def _damaged(self, error: sqlite3.Error) -> TextSearchError:
        self._reset(error)
        return TextSearchError(
            TEXT_SEARCH_UNAVAILABLE,
            "the conversation index was damaged and has been reset; it is being rebuilt",
        )

    def close(self) -> None:
        """Close both connections (idempotent)."""
        with self._write_lock, self._read_lock:
            if not self._closed:
                self._closed = True
                self._writer.close()
                self._reader.close()

    # -- reading -------------------------------------------------------------------------------

    def _reading(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run `work` on the read connection; a damaged file is reset and reported as unavailable."""
        self._follow_file()
        with self._read_lock:
            self._check_open()
            try:
                return work(self._reader)
            except sqlite3.Error as error:
                if not is_damage(error):
                    raise TextSearchError(
                        TEXT_SEARCH_UNAVAILABLE, f"the conversation index cannot be read: {error}"
                    ) from error
                damage = error
        raise self._damaged(damage)

    def search(
        self,
        text: str,
        *,
        facts: FactsProvider,
        limit: int = 20,
        exclude_session_id: str | None = None,
        cwd: str | None = None,
        cancel: SearchCancellation | None = None,
    ) -> ConversationResults:
        """Sessions whose conversation matches `text`; see `ConversationSearch.search`.

        `cancel.cancel()` from another thread stops the statement in flight: a progress handler
        polls it every `PROGRESS_OPS` SQLite steps.
        """
        if type(limit) is not int or not 1 <= limit <= MAX_LIMIT:
            raise TextSearchError(
                TEXT_SEARCH_INVALID_ARGUMENT, f"the search limit must be an integer from 1 to {MAX_LIMIT}"
            )
        plan = parse_query(text if isinstance(text, str) else "")
        if plan.status != "ok":
            return ConversationResults(status=plan.status, pending=plan.pending)
        switch = cancel if cancel is not None else SearchCancellation()

        def work(connection: sqlite3.Connection) -> ConversationResults:
            connection.set_progress_handler(lambda: 1 if switch.cancelled else 0, PROGRESS_OPS)
            try:
                switch.raise_if_cancelled()
                connection.execute("BEGIN")
                return self._searcher.search(
                    plan,
                    facts=facts,
                    limit=limit,
                    exclude_session_id=exclude_session_id,
                    cwd=cwd,
                    cancel=switch,
                )
            except sqlite3.OperationalError as error:
                if error.sqlite_errorcode == sqlite3.SQLITE_INTERRUPT or switch.cancelled:
                    raise TextSearchError(
                        TEXT_SEARCH_CANCELLED, "the conversation search was cancelled"
                    ) from None
                raise
            finally:
                connection.set_progress_handler(None, 0)
                if connection.in_transaction:
                    connection.execute("ROLLBACK")

        return self._reading(work)

    def indexed(self) -> Mapping[str, IndexedSession]:
        """What is indexed, by session id."""

        def work(connection: sqlite3.Connection) -> Mapping[str, IndexedSession]:
            rows = connection.execute("SELECT session_id, through_seq, source, messages FROM sessions")
            return {session_id: IndexedSession(seq, source, count) for session_id, seq, source, count in rows}

        return self._reading(work)

    def session_rows(self, session_id: str) -> list[ConversationRow]:
        """The rows indexed for a session, in seq order (empty when it is not indexed).

        Seq order is the projection's order except after a compaction, whose checkpoint stands
        where the messages it replaced stood.

        For inspection and tests: the logs stay the source of truth for what a session says.
        """

        def work(connection: sqlite3.Connection) -> list[ConversationRow]:
            found = connection.execute(
                "SELECT m.seq, m.kind, t.text, m.time FROM sessions AS s "
                "JOIN messages AS m ON m.session = s.key JOIN message_texts AS t ON t.id = m.id "
                "WHERE s.session_id = ? ORDER BY m.seq",
                (session_id,),
            )
            return [
                ConversationRow(
                    seq,
                    "assistant" if kind == KIND_ASSISTANT else "user",
                    loaded_text(text),
                    kind == KIND_CHECKPOINT,
                    time,
                )
                for seq, kind, text, time in found
            ]

        return self._reading(work)

    # -- writing -------------------------------------------------------------------------------

    def _write_batch(self, batch: list[PreparedChange], bulk: _Bulk | None) -> UpdateReport:
        self._follow_file()
        with self._write_lock:
            self._check_open()
            connection = self._writer
            try:
                connection.execute("BEGIN IMMEDIATE")
                writer = BatchWriter(connection, automerge=0 if bulk else FTS_AUTOMERGE)
                counts = writer.apply(batch)
                connection.execute("COMMIT")
                if bulk is not None:
                    # A shard below the one new rows go to is full: merge it now, while the
                    # caller keeps reading logs, rather than all shards at the end.
                    bulk.written |= writer.written_shards
                    head = shard_of(writer.next_id)
                    for shard in sorted(bulk.written - bulk.optimized):
                        if shard < head:
                            self._finish_shard(shard)
                            bulk.optimized.add(shard)
            except sqlite3.Error as error:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                if not is_damage(error):
                    raise TextSearchError(
                        TEXT_SEARCH_UNAVAILABLE, f"the conversation index cannot be written: {error}"
                    ) from error
                damage = error
            except BaseException:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                raise
            else:
                return UpdateReport(len(batch), counts.inserted, counts.deleted)
        raise self._damaged(damage)

    def update(
        self,
        changes: Iterable[SessionChange],
        *,
        progress: Progress | None = None,
        total: int | None = None,
        bulk: bool = False,
    ) -> UpdateReport:
        """Apply `changes` in batches, each in one transaction; returns what was done.

        While one batch is written on a worker thread the next is gathered from `changes` (a
        generator reading logs overlaps with SQLite indexing). `progress(done, total)` is called
        after each committed batch with the number of changes applied so far. If `changes` or
        `progress` raises, the batch being written is still committed, then the error propagates.

        `bulk=True` is for a first build (or a rebuild): FTS5 does not merge segments while it
        writes, and every shard written is optimized once at the end (about 13% less CPU than
        merging as it goes, and the index ends in one segment per shard).
        """
        sessions = inserted = deleted = 0
        pending: Future[UpdateReport] | None = None
        state = _Bulk() if bulk else None

        def settle() -> None:
            nonlocal sessions, inserted, deleted, pending
            if pending is None:
                return
            done, pending = pending.result(), None
            sessions += done.sessions
            inserted += done.inserted
            deleted += done.deleted
            if progress is not None:
                progress(sessions, total)

        if bulk:
            self._set_automerge(0)
        finished = False
        try:
            with ThreadPoolExecutor(max_workers=1, thread_name_prefix="text-index") as pool:
                try:
                    for batch in _batches(changes):
                        settle()
                        pending = pool.submit(self._write_batch, batch, state)
                    settle()
                finally:
                    if pending is not None:  # an error while gathering: the written batch still counts
                        pending.result()
            finished = True
        finally:
            if state is not None:
                with self._write_lock:
                    self._check_open()
                    for shard in self._shards():
                        if finished and shard in state.written and shard not in state.optimized:
                            self._finish_shard(shard)
                        else:
                            self._set_shard_automerge(shard, FTS_AUTOMERGE)
        return UpdateReport(sessions, inserted, deleted)

    def _shards(self) -> list[int]:
        return list_shards(self._writer)

    def _set_automerge(self, level: int) -> None:
        with self._write_lock:
            self._check_open()
            for shard in self._shards():
                self._set_shard_automerge(shard, level)

    def _set_shard_automerge(self, shard: int, level: int) -> None:
        table = shard_table(shard)
        self._writer.execute(f"INSERT INTO {table}({table}, rank) VALUES ('automerge', {level})")

    def _finish_shard(self, shard: int) -> None:
        """Merge a shard written in bulk into one segment and let it merge as it goes again."""
        table = shard_table(shard)
        self._writer.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
        self._set_shard_automerge(shard, FTS_AUTOMERGE)

    def optimize(self) -> None:
        """Merge every shard's segments into one (FTS5 `optimize`)."""
        with self._write_lock:
            self._check_open()
            for shard in self._shards():
                table = shard_table(shard)
                self._writer.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")


__all__ = ["BATCH_ROWS", "MAX_LIMIT", "TextIndex"]
