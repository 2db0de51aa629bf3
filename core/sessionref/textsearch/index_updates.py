"""`IndexUpdater`: writing changes into the conversation index's file, in batches on a worker thread.

`update` batches changes into transactions of about `BATCH_ROWS` messages and writes a batch on
a worker thread while the caller prepares the next one (reading logs and indexing overlap on two
cores). A bulk update (a first build) lets FTS5 merge each shard once, when it is full. A shard
that sealed (or lost its lists to a deletion) gets its word lists (`word_lists`): in a bulk
update computed by a thread of their own on a read connection while the build goes on (the
writer is the build's bottleneck: the thread reading logs waits on it about half the time), and
stored by the writer; otherwise computed and stored by the writer right after the batch.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from sessionref.textsearch.index_file import IndexFile
from sessionref.textsearch.protocol import Progress, SessionChange, SessionRows, UpdateReport
from sessionref.textsearch.schema import FTS_AUTOMERGE, connect, list_shards, shard_of, shard_table
from sessionref.textsearch.word_lists import ShardLists, compute_lists, store_lists, unlisted_sealed
from sessionref.textsearch.writer import BatchWriter, PreparedChange, prepare

# Messages per write transaction (and per progress report) during `update`: larger batches mean
# fewer FTS5 segments and fewer hand-overs between the threads (30k sessions: 20k rows 42.5 s,
# 60k rows 38.8 s); a batch of 50k messages holds about 35 MB of text in memory.
BATCH_ROWS = 50_000
# Sessions per write transaction at most (a catch-up of many small changes still commits often).
BATCH_SESSIONS = 2_000


log = logging.getLogger("sessionref.textsearch")


class _Lister:
    """Computes the word lists of the shards a bulk update sealed, one at a time, on a thread and
    a read connection of its own (SQLite runs them without the GIL)."""

    def __init__(self, file: IndexFile) -> None:
        self._file = file
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="text-lists")
        self._connection: sqlite3.Connection | None = None
        self._pending: list[Future[ShardLists]] = []

    def submit(self, shard: int) -> None:
        """Start computing `shard`'s lists (sealed, merged, committed)."""
        self._pending.append(self._pool.submit(self._compute, shard))

    def _compute(self, shard: int) -> ShardLists:
        if self._connection is None:
            self._connection = connect(self._file.path, reader=True)
        return compute_lists(self._connection, shard)

    def computed(self, *, wait: bool) -> list[ShardLists]:
        """The lists computed so far (all of them when `wait`); a failed computation is left to
        the writer (`_list_sealed_shards`)."""
        ready: list[ShardLists] = []
        for future in list(self._pending):
            if wait or future.done():
                self._pending.remove(future)
                try:
                    ready.append(future.result())
                except sqlite3.Error as error:
                    log.warning("cannot compute word lists beside the build: %s", error)
        return ready

    def close(self) -> None:
        """Stop the thread (after what it is computing) and close its connection."""
        for future in self._pending:
            future.cancel()
        self._pool.shutdown(wait=True)
        if self._connection is not None:
            self._connection.close()


@dataclass
class _Bulk:
    """Shards a bulk update wrote to, those already merged, and who computes their lists."""

    lister: _Lister
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


class IndexUpdater:
    """The writes of `TextIndex` into `file`: `update`, on its write connection."""

    def __init__(self, file: IndexFile) -> None:
        self._file = file

    def _write_batch(self, batch: list[PreparedChange], bulk: _Bulk | None) -> UpdateReport:
        def work(connection: sqlite3.Connection) -> UpdateReport:
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
                            _finish_shard(connection, shard)
                            bulk.optimized.add(shard)
                            bulk.lister.submit(shard)
                    _store_lists(connection, bulk.lister.computed(wait=False))
                else:
                    _list_sealed_shards(connection, writer.next_id)
            except BaseException:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                raise
            return UpdateReport(len(batch), counts.inserted, counts.deleted)

        return self._file.write(work)

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
        state = _Bulk(_Lister(self._file)) if bulk else None
        lists: list[ShardLists] = []

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
            with self._file.writer() as connection:
                for shard in list_shards(connection):
                    _set_shard_automerge(connection, shard, 0)
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
                with self._file.writer() as connection:
                    for shard in list_shards(connection):
                        if finished and shard in state.written and shard not in state.optimized:
                            _finish_shard(connection, shard)
                        else:
                            _set_shard_automerge(connection, shard, FTS_AUTOMERGE)
                if finished:
                    lists = state.lister.computed(wait=True)
                state.lister.close()
        if state is not None:
            self._file.write(lambda connection: self._finish_lists(connection, lists))
        return UpdateReport(sessions, inserted, deleted)

    @staticmethod
    def _finish_lists(connection: sqlite3.Connection, lists: list[ShardLists]) -> None:
        """Store the lists computed beside a bulk update, then list any sealed shard still without."""
        _store_lists(connection, lists)
        next_id = int(connection.execute("SELECT value FROM meta WHERE key = 'next_id'").fetchone()[0])
        _list_sealed_shards(connection, next_id)


def _store_lists(connection: sqlite3.Connection, lists: list[ShardLists]) -> None:
    """Store computed lists, each in its own transaction (those of a shard that lost rows since are
    dropped: the shard is listed again by `_list_sealed_shards`)."""
    for computed in lists:
        connection.execute("BEGIN IMMEDIATE")
        store_lists(connection, computed)
        connection.execute("COMMIT")


def _list_sealed_shards(connection: sqlite3.Connection, next_id: int) -> None:
    """Compute and store the word lists of every sealed shard without them, one transaction each."""
    for shard in unlisted_sealed(connection, list_shards(connection), next_id):
        connection.execute("BEGIN IMMEDIATE")
        store_lists(connection, compute_lists(connection, shard))
        connection.execute("COMMIT")


def _set_shard_automerge(connection: sqlite3.Connection, shard: int, level: int) -> None:
    table = shard_table(shard)
    connection.execute(f"INSERT INTO {table}({table}, rank) VALUES ('automerge', {level})")


def _finish_shard(connection: sqlite3.Connection, shard: int) -> None:
    """Merge a shard written in bulk into one segment and let it merge as it goes again."""
    table = shard_table(shard)
    connection.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
    _set_shard_automerge(connection, shard, FTS_AUTOMERGE)
