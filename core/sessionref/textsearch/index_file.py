"""`IndexFile`: the conversation index's SQLite file and its two connections, kept usable.

Two connections to one WAL file: searches read on one while updates write on the other, each
under its own lock (`read`, `write`). A damaged file found at any point is deleted and recreated
empty (`rebuilt`, `resets`); a file another process replaced is followed. `index.TextIndex`
searches through it and `index_updates.IndexUpdater` writes through it.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from sessionref.store.cache_file import SlowStatements, remove_cache_files
from sessionref.textsearch.errors import TEXT_SEARCH_CLOSED, TEXT_SEARCH_UNAVAILABLE, TextSearchError
from sessionref.textsearch.schema import connect, ensure_fts5, is_damage, open_index_file
from sessionref.textsearch.search import Searcher

log = logging.getLogger("sessionref.textsearch")

T = TypeVar("T")


def _file_identity(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


class IndexFile:
    """The index file at `path` (created when missing, recreated when damaged); see `TextIndex`.

    Thread-safe: one reader and one writer at a time, side by side.
    """

    def __init__(self, path: str | Path, *, verify: bool = True, slow: SlowStatements | None = None) -> None:
        ensure_fts5()
        self.path = Path(path)
        self._slow = slow
        self._write_lock = threading.Lock()
        self._read_lock = threading.Lock()
        self._closed = False
        self.resets = 0
        self.generation = 0  # grows each time the connections move to a new file (reset, replaced)
        self._writer, self.rebuilt = open_index_file(self.path, verify=verify, slow=slow)
        self._connect()

    def _connect(self) -> None:
        """Open the search connection beside the writer and note which file both are on."""
        self._identity = _file_identity(self.path)
        self._reader = connect(self.path, reader=True, slow=self._slow)
        self._searcher = Searcher(self._reader)
        try:
            self._searcher.warm()
        except sqlite3.Error as error:  # a damaged file is handled by the first search
            log.warning("cannot preload the conversation index %s: %s", self.path, error)

    @property
    def searcher(self) -> Searcher:
        """The searcher on the read connection (use it inside `read`: a reset replaces it)."""
        return self._searcher

    def check_open(self) -> None:
        """Raise `TEXT_SEARCH_CLOSED` once the file is closed."""
        if self._closed:
            raise TextSearchError(TEXT_SEARCH_CLOSED, "the conversation index is closed")

    def read(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run `work` on the read connection; a damaged file is reset and reported as unavailable."""
        self._follow_file()
        with self._read_lock:
            self.check_open()
            try:
                return work(self._reader)
            except sqlite3.Error as error:
                if not is_damage(error):
                    raise TextSearchError(
                        TEXT_SEARCH_UNAVAILABLE, f"the conversation index cannot be read: {error}"
                    ) from error
                damage = error
        raise self._damaged(damage)

    def write(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run `work` on the write connection; a damaged file is reset and reported as unavailable.

        `work` ends any transaction it began (a failure inside it is the caller's to roll back).
        """
        self._follow_file()
        with self._write_lock:
            self.check_open()
            try:
                return work(self._writer)
            except sqlite3.Error as error:
                if not is_damage(error):
                    raise TextSearchError(
                        TEXT_SEARCH_UNAVAILABLE, f"the conversation index cannot be written: {error}"
                    ) from error
                damage = error
        raise self._damaged(damage)

    @contextmanager
    def writer(self) -> Iterator[sqlite3.Connection]:
        """The write connection, held under the write lock (no reset: errors reach the caller)."""
        with self._write_lock:
            self.check_open()
            yield self._writer

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
            remove_cache_files(self.path)
            self._writer, _ = open_index_file(self.path, verify=False, slow=self._slow)
            self._connect()
            self.rebuilt = True
            self.resets += 1
            self.generation += 1

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
            self._writer, _ = open_index_file(self.path, verify=False, slow=self._slow)
            self._connect()
            self.rebuilt = True
            self.generation += 1

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
