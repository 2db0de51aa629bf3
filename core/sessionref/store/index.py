"""The SQLite discovery index: one row per log file with what discovery needs.

It is a cache: when it is missing, unreadable, damaged (`PRAGMA quick_check` at open, or a
"malformed" error from any later statement) or of another schema version it is deleted and
rebuilt from the logs. If the store root is not writable it lives in the user cache directory
instead, keyed by a hash of the root. Rows are never trusted as paths: a row whose path is not
`<project>/<session>/session.jsonl[.zstd]` or whose columns have the wrong types is dropped.
"""

from __future__ import annotations

import hashlib
import logging
import operator
import os
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from sessionref.store.cache_file import (
    MEMORY_PREFIX,
    CacheFileUnusable,
    SlowStatements,
    connect_cache,
    open_cache_file,
)
from sessionref.store.foreign_index import ensure_foreign_tables
from sessionref.store.paths import log_path_shape
from sessionref.store.scan import LogState

log = logging.getLogger("sessionref.store")

INDEX_FILE_NAME = ".sessionref-index.sqlite"
CAUGHT_UP_KEY = "caught_up_at"
"""Meta key: when (epoch ms) the last walk that caught every log up began (see `index_query`)."""
SCHEMA_VERSION = "2"  # 2: `last_time` (last activity)
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
    "last_time",
)
# The Python types each column must hold (None allowed where the column is nullable).
_TYPES: tuple[tuple[type, bool], ...] = (
    (str, False),
    (str, True),
    (str, True),
    (int, False),
    (str, True),
    (str, True),
    (str, True),
    (int, False),
    (int, False),
    (int, False),
    (int, True),
    (str, True),
    (int, False),
    (int, True),
)
_SQLITE_CORRUPT = 11
_SQLITE_NOTADB = 26
STRICT_TABLES = sqlite3.sqlite_version_info >= (3, 37, 0)
"""SQLite enforces column types in STRICT tables, and `PRAGMA quick_check` verifies them in every row."""
_CREATE_LOGS = (
    "CREATE TABLE logs (\n"
    "    path TEXT PRIMARY KEY, session_id TEXT, cwd TEXT, created_at INTEGER NOT NULL,\n"
    "    header_json TEXT, title TEXT, fallback TEXT, offset INTEGER NOT NULL, size INTEGER NOT NULL,\n"
    "    mtime_ns INTEGER NOT NULL, last_seq INTEGER, problem TEXT, torn INTEGER NOT NULL,\n"
    "    last_time INTEGER\n"
    ")" + (" STRICT" if STRICT_TABLES else "")
)
_SCHEMA = f"""
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
{_CREATE_LOGS};
INSERT INTO meta (key, value) VALUES ('schema_version', '{SCHEMA_VERSION}');
"""


def index_path_for(root: Path, *, create: bool = True) -> Path:
    """Where the index of `root` lives: beside the logs, or the user cache dir if the root is read-only.

    `create=False` (a reader) never makes the cache folder; the path may then not exist. When the
    cache folder cannot be made either, the index lives in memory for this process
    (`cache_file.MEMORY_PREFIX`): a read-only store is still read, only catch-up starts afresh.
    """
    if os.access(root, os.W_OK):
        return root / INDEX_FILE_NAME
    import platformdirs

    digest = hashlib.sha256(str(root.resolve()).encode("utf-8", "surrogatepass")).hexdigest()[:24]
    cache = platformdirs.user_cache_path("sessionref") / "indexes"
    if create:
        try:
            cache.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            log.warning("the index of %s is kept in memory: cannot create %s (%s)", root, cache, error)
            return Path(MEMORY_PREFIX + f"sessionref-index-{digest}")
    return cache / f"{digest}.sqlite"


def is_corruption(error: BaseException) -> bool:
    """True for SQLite errors that mean the file is damaged (not merely busy or locked)."""
    code = getattr(error, "sqlite_errorcode", None)
    if isinstance(code, int) and code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB):
        return True
    text = str(error).lower()
    return "malformed" in text or "not a database" in text


def _typed(column: str, kind: type, nullable: bool) -> str:
    sql_type = "'text'" if kind is str else "'integer'"
    return f"typeof({column}) IN ({sql_type}, 'null')" if nullable else f"typeof({column}) = {sql_type}"


# Rows whose columns hold the wrong types never load: a STRICT table cannot hold them once
# quick_check passed at open; without STRICT tables (SQLite < 3.37) the query leaves them out.
_WELL_TYPED = " AND ".join(_typed(c, k, n) for c, (k, n) in zip(_COLUMNS, _TYPES, strict=True))
# `LogState`'s fields in order. The table's `torn` column is no longer used: always written 0,
# kept so that indexes of earlier versions stay valid (no schema change, no rebuild).
_STATE_COLUMNS = tuple(column for column in _COLUMNS if column != "torn")
# The last column is the derived `LogState.updated_at` (last activity), computed by SQLite too.
_LOAD_QUERY = f"SELECT {', '.join(_STATE_COLUMNS)}, coalesce(last_time, created_at) FROM logs" + (
    "" if STRICT_TABLES else f" WHERE {_WELL_TYPED}"
)


_ROW_OF = operator.attrgetter(*_STATE_COLUMNS)
_SAVE_SQL = (
    f"INSERT OR REPLACE INTO logs ({', '.join(_STATE_COLUMNS)}, torn)"
    f" VALUES ({', '.join('?' for _ in _STATE_COLUMNS)}, 0)"
)


def _storable(row: tuple[object, ...]) -> bool:
    try:
        for value in row:
            if isinstance(value, str):
                value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _problem(connection: sqlite3.Connection) -> str | None:
    """Why an existing index file cannot be used (another schema, a failed `quick_check`), or None."""
    row = connection.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    table = connection.execute("SELECT sql FROM sqlite_master WHERE name = 'logs'").fetchone()
    if row is None or row[0] != SCHEMA_VERSION or table != (_CREATE_LOGS,):
        return "it has another schema version"
    check = connection.execute("PRAGMA quick_check").fetchone()
    if check is None or check[0] != "ok":
        return f"it is damaged ({check[0] if check else 'no answer'})"
    return None


def _create(connection: sqlite3.Connection) -> None:
    connection.executescript(_SCHEMA)


def _add_foreign_tables(connection: sqlite3.Connection) -> None:
    ensure_foreign_tables(connection, STRICT_TABLES)


class DiscoveryIndex:
    """Persistence of `LogState` rows; callers serialise access (the store holds a lock)."""

    def __init__(self, path: Path, *, slow: SlowStatements | None = None) -> None:
        self.path = path
        self.rebuilt = False
        self._slow = slow
        self.all_states: Callable[[], Iterable[LogState]] = tuple
        """Every state the owner knows: saved again when a damaged index is rebuilt while open."""
        self._resaving = False
        self._connection = self._open()

    def _open(self, damaged: str | None = None) -> sqlite3.Connection:
        """The index file's connection (rebuilt when unusable or `damaged`), else a private one."""
        try:
            connection, created = open_cache_file(
                self.path,
                what="discovery index",
                problem=_problem,
                create=_create,
                ready=_add_foreign_tables,
                damaged=damaged,
                log=log,
                slow=self._slow,
            )
        except CacheFileUnusable as error:
            return self._private(error.reason)
        self.rebuilt = self.rebuilt or created
        return connection

    def _private(self, reason: str) -> sqlite3.Connection:
        """An in-memory index for this process only, when the shared file cannot be used."""
        log.warning("using a private in-memory discovery index: %s", reason)
        self.path = Path(":memory:")
        self.rebuilt = True
        connection = connect_cache(self.path, slow=self._slow)
        _create(connection)
        _add_foreign_tables(connection)
        return connection

    def _damaged(self, error: sqlite3.Error) -> None:
        """Replace a damaged index by an empty one (the caller saves what it knows again)."""
        self._connection.close()
        if self.path == Path(":memory:"):
            self._connection = self._private(f"the in-memory index failed ({error})")
        else:
            self._connection = self._open(damaged=f"it is damaged ({error})")

    def load(self) -> dict[str, LogState]:
        """Every usable stored row by relative log path (a damaged index loads as empty, rebuilt)."""
        states: dict[str, LogState] = {}
        shaped = log_path_shape  # SQLite decoded the text as strict UTF-8: the path's shape is left
        try:
            total = self._connection.execute("SELECT count(*) FROM logs").fetchone()[0]
            # A tight loop (this runs for every row at every open).
            for row in self._connection.execute(_LOAD_QUERY):
                if shaped(row[0]):
                    states[row[0]] = LogState(*row)
        except sqlite3.Error as error:
            # Damaged, or a row no reader can decode (text that is not UTF-8): the index is a
            # cache, so it is rebuilt from the logs rather than trusted or fatal.
            self._damaged(error)
            return {}
        if total > len(states):
            log.warning("ignoring %d unusable rows of the discovery index %s", total - len(states), self.path)
        return states

    def save(self, states: Iterable[LogState]) -> None:
        """Insert or update rows in one transaction (rows that cannot be stored as text are skipped)."""
        rows = list(map(_ROW_OF, states))
        if not rows:
            return
        try:  # one pass in C; only a row SQLite cannot take as text makes every row be checked
            "\x00".join(value for row in rows for value in row if isinstance(value, str)).encode("utf-8")
        except UnicodeEncodeError:
            storable = [row for row in rows if _storable(row)]
            log.warning("not indexing %d logs whose fields are not valid Unicode", len(rows) - len(storable))
            rows = storable
        if rows:
            self._write(_SAVE_SQL, rows)

    def delete(self, paths: Iterable[str]) -> None:
        """Forget rows for logs that no longer exist."""
        rows = [(path,) for path in paths]
        if rows:
            self._write("DELETE FROM logs WHERE path = ?", rows)

    def mark_caught_up(self, started_ms: int) -> None:
        """Record that a walk begun at `started_ms` caught every log up (readers judge freshness by it)."""
        row = (CAUGHT_UP_KEY, str(started_ms))
        self._write("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", [row])

    def connection(self) -> sqlite3.Connection:
        """The current connection (replaced when a damaged index is rebuilt): for reading only."""
        return self._connection

    def write(self, sql: str, rows: Sequence[tuple[object, ...]]) -> None:
        """Run `sql` for every row in one transaction (a damaged index is rebuilt; other errors logged)."""
        self._write(sql, rows)

    def _write(self, sql: str, rows: Sequence[tuple[object, ...]]) -> None:
        try:
            with self._transaction():
                self._connection.executemany(sql, rows)
        except sqlite3.Error as error:
            if not is_corruption(error):
                # The index is a cache: the logs stay the truth and the next open catches up.
                log.warning("cannot update the discovery index %s: %s", self.path, error)
                return
            self._damaged(error)
            if not self._resaving:  # once: a fresh file that fails again is only logged next time
                self._resaving = True
                try:
                    self.save(self.all_states())
                finally:
                    self._resaving = False

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
