"""`IndexUpdater`: writing changes into the conversation index's file, in batches on a worker thread.

`update` batches changes into transactions of about `BATCH_ROWS` messages and writes a batch on
a worker thread while the caller prepares the next one (reading logs and indexing overlap on two
cores). A bulk update (a first build) lets FTS5 merge each shard once, when it is full. Once an
update ends, the shards it sealed get their word lists in the background (`list_worker`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from sessionref.textsearch.index_file import IndexFile
from sessionref.textsearch.list_worker import ListWorker
from sessionref.textsearch.protocol import Progress, SessionChange, SessionRows, UpdateReport
from sessionref.textsearch.schema import FTS_AUTOMERGE, list_shards, shard_of, shard_table
from sessionref.textsearch.writer import BatchWriter, PreparedChange, prepare

# Messages per write transaction (and per progress report) during `update`: larger batches mean
# fewer FTS5 segments and fewer hand-overs between the threads (30k sessions: 20k rows 42.5 s,
# 60k rows 38.8 s); a batch of 50k messages holds about 35 MB of text in memory.
BATCH_ROWS = 50_000
# Sessions per write transaction at most (a catch-up of many small changes still commits often).
BATCH_SESSIONS = 2_000


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


class IndexUpdater:
    """The writes of `TextIndex` into `file`: `update`, on its write connection, and the word
    lists computed after it (`lists`)."""

    def __init__(self, file: IndexFile) -> None:
        self._file = file
        self.lists = ListWorker(file)

    def close(self) -> None:
        """Stop computing word lists (the file stays open)."""
        self.lists.close()

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
        self.lists.wake()
        return UpdateReport(sessions, inserted, deleted)


def _set_shard_automerge(connection: sqlite3.Connection, shard: int, level: int) -> None:
    table = shard_table(shard)
    connection.execute(f"INSERT INTO {table}({table}, rank) VALUES ('automerge', {level})")


def _finish_shard(connection: sqlite3.Connection, shard: int) -> None:
    """Merge a shard written in bulk into one segment and let it merge as it goes again."""
    table = shard_table(shard)
    connection.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
    _set_shard_automerge(connection, shard, FTS_AUTOMERGE)
