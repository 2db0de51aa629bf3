"""The SQLite discovery index: one row per log file with what discovery needs.

It is a cache: when it is missing, unreadable or of another schema version it is deleted and
rebuilt from the logs. If the store root is not writable it lives in the user cache directory
instead, keyed by a hash of the root.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path

from sessionref.store.scan import LogState

log = logging.getLogger("sessionref.store")

INDEX_FILE_NAME = ".sessionref-index.sqlite"
SCHEMA_VERSION = "1"
_COLUMNS = (
    "path",
    "session_id",
    "cwd",
    "created_at",
    "header_json",
    "title",
    "fallback",
    "offset",
    "size",
    "mtime_ns",
    "last_seq",
    "problem",
    "torn",
)
_SCHEMA = f"""
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE logs (
    path TEXT PRIMARY KEY, session_id TEXT, cwd TEXT, created_at INTEGER NOT NULL,
    header_json TEXT, title TEXT, fallback TEXT, offset INTEGER NOT NULL, size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL, last_seq INTEGER, problem TEXT, torn INTEGER NOT NULL
);
INSERT INTO meta (key, value) VALUES ('schema_version', '{SCHEMA_VERSION}');
"""


def index_path_for(root: Path) -> Path:
    """Where the index of `root` lives: beside the logs, or the user cache dir if the root is read-only."""
    if os.access(root, os.W_OK):
        return root / INDEX_FILE_NAME
    import platformdirs

    digest = hashlib.sha256(str(root.resolve()).encode("utf-8", "surrogatepass")).hexdigest()[:24]
    cache = platformdirs.user_cache_path("sessionref") / "indexes"
    cache.mkdir(parents=True, exist_ok=True)
    return cache / f"{digest}.sqlite"


def _remove_index_files(path: Path) -> bool:
    try:
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(FileNotFoundError):
                os.remove(str(path) + suffix)
    except OSError:
        return False
    return True


class DiscoveryIndex:
    """Persistence of `LogState` rows; callers serialise access (the store holds a lock)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.rebuilt = False
        self._connection = self._open()

    def _connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        connection.execute("PRAGMA busy_timeout = 5000")
        return connection

    def _open(self) -> sqlite3.Connection:
        existed = self.path.exists()
        connection: sqlite3.Connection | None = None
        try:
            if not existed:
                raise FileNotFoundError(self.path)
            connection = self._connect()
            row = connection.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            if row is not None and row[0] == SCHEMA_VERSION:
                connection.execute("PRAGMA journal_mode = WAL")
                connection.execute("PRAGMA synchronous = NORMAL")
                return connection
            reason = "it has another schema version"
        except FileNotFoundError:
            reason = "it does not exist"
        except sqlite3.DatabaseError as error:
            if "locked" in str(error) or "busy" in str(error):
                return self._private(f"{self.path} is locked by another process")
            reason = f"it is unreadable ({error})"
        if connection is not None:
            connection.close()
        if existed:
            log.warning("rebuilding the discovery index %s: %s", self.path, reason)
            if not _remove_index_files(self.path):
                return self._private(f"{self.path} cannot be replaced")
        self.rebuilt = True
        try:
            connection = self._connect()
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = NORMAL")
            connection.executescript(_SCHEMA)
        except sqlite3.Error as error:
            return self._private(f"{self.path} cannot be created ({error})")
        return connection

    def _private(self, reason: str) -> sqlite3.Connection:
        """An in-memory index for this process only, when the shared file cannot be used."""
        log.warning("using a private in-memory discovery index: %s", reason)
        self.path = Path(":memory:")
        self.rebuilt = True
        connection = self._connect()
        connection.executescript(_SCHEMA)
        return connection

    def load(self) -> dict[str, LogState]:
        """Every stored row by relative log path."""
        query = f"SELECT {', '.join(_COLUMNS)} FROM logs"
        states: dict[str, LogState] = {}
        for row in self._connection.execute(query):
            state = LogState(*row)
            state.torn = bool(state.torn)
            states[state.path] = state
        return states

    def save(self, states: Iterable[LogState]) -> None:
        """Insert or update rows in one transaction."""
        placeholders = ", ".join("?" for _ in _COLUMNS)
        rows = [tuple(getattr(state, column) for column in _COLUMNS) for state in states]
        if not rows:
            return
        try:
            with self._transaction():
                self._connection.executemany(
                    f"INSERT OR REPLACE INTO logs ({', '.join(_COLUMNS)}) VALUES ({placeholders})", rows
                )
        except sqlite3.Error as error:
            # The index is a cache: the logs stay the truth and the next open catches up.
            log.warning("cannot update the discovery index %s: %s", self.path, error)

    def delete(self, paths: Iterable[str]) -> None:
        """Forget rows for logs that no longer exist."""
        rows = [(path,) for path in paths]
        if rows:
            try:
                with self._transaction():
                    self._connection.executemany("DELETE FROM logs WHERE path = ?", rows)
            except sqlite3.Error as error:
                log.warning("cannot update the discovery index %s: %s", self.path, error)

    def _transaction(self) -> _Transaction:
        return _Transaction(self._connection)

    def close(self) -> None:
        """Close the connection (idempotent)."""
        self._connection.close()


class _Transaction:
    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection

    def __enter__(self) -> None:
        self._connection.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, value: object, traceback: object) -> None:
        self._connection.execute("COMMIT" if kind is None else "ROLLBACK")
