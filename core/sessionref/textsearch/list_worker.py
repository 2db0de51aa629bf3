"""`ListWorker`: the word lists of sealed shards, computed in the background after updates.

Computing a sealed shard's lists scores every message of each of its common words (about 8.5 s a
262,144-message shard, `word_lists.compute_lists`). Doing it on the writer would hold the write
lock that long (a new message would wait seconds to become searchable) and, during a first
build, add that time to the build (docs/benchmarks.md, "Then: a word's lists past the budget").
So a thread of its own does it on a read connection of its own once an update has ended, and
stores each shard's lists through the file's writer in one short transaction. Until then a
keystroke past the budget is answered as before (`complete=False`). Lists computed on a file
that was since replaced (reset, rebuilt by another process) or of a shard that lost rows since
are not stored.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from functools import partial

from sessionref.textsearch.errors import TextSearchError
from sessionref.textsearch.index_file import IndexFile
from sessionref.textsearch.schema import connect, list_shards
from sessionref.textsearch.word_lists import ShardLists, compute_lists, store_lists, unlisted_sealed

log = logging.getLogger("sessionref.textsearch")


class ListWorker:
    """Lists the sealed shards of `file` that lack lists, on a daemon thread started by `wake`."""

    def __init__(self, file: IndexFile) -> None:
        self._file = file
        self._condition = threading.Condition()
        self._woken = False
        self._idle = True
        self._stopping = False
        self._thread: threading.Thread | None = None

    def wake(self) -> None:
        """Look for shards to list (after an update ended)."""
        with self._condition:
            if self._stopping:
                return
            self._woken, self._idle = True, False
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="text-lists", daemon=True)
                self._thread.start()
            self._condition.notify_all()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until every sealed shard found after the last `wake` is listed (or the worker
        stopped); False when `timeout` passed first."""
        with self._condition:
            return self._condition.wait_for(lambda: self._idle or self._stopping, timeout)

    def close(self) -> None:
        """Stop the thread (within one word's scoring) and wait for it."""
        with self._condition:
            self._stopping = True
            self._condition.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join()

    def _run(self) -> None:
        while True:
            with self._condition:
                self._condition.wait_for(lambda: self._woken or self._stopping)
                if self._stopping:
                    return
                self._woken = False
            try:
                self._list_sealed_shards()
            except (sqlite3.Error, TextSearchError) as error:  # the next update's wake tries again
                log.warning("cannot compute word lists of the conversation index: %s", error)
            with self._condition:
                if not self._woken:
                    self._idle = True
                    self._condition.notify_all()

    def _list_sealed_shards(self) -> None:
        """List every sealed shard without lists, oldest first, until none is left or the file moved."""
        generation = self._file.generation
        if not self._file.path.exists():  # deleted under it: connecting would create a stray file
            return
        connection = connect(self._file.path, reader=True)
        try:
            while not self._stopping:
                meta = connection.execute("SELECT value FROM meta WHERE key = 'next_id'").fetchone()
                todo = unlisted_sealed(connection, list_shards(connection), int(meta[0]))
                if not todo:
                    return
                lists = compute_lists(connection, todo[0], lambda: self._stopping)
                if lists is None or not self._file.write(
                    partial(self._store, lists=lists, generation=generation)
                ):
                    return
        finally:
            connection.close()

    def _store(self, connection: sqlite3.Connection, lists: ShardLists, generation: int) -> bool:
        """Store `lists` unless the file moved since they were read (then: False)."""
        if self._file.generation != generation:
            return False
        connection.execute("BEGIN IMMEDIATE")
        try:
            store_lists(connection, lists)  # not stored when the shard lost rows: listed again next
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        return True
