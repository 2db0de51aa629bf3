"""Opening a cache database file safely: one helper for the discovery index and the text index.

Both indexes are SQLite files that only cache what the logs say, so a file that cannot be used
is deleted and created again empty rather than trusted or fatal. `open_cache_file` does that the
same way for both: a file (or a WAL/SHM/journal companion) that is a symbolic link is never
followed but replaced, a new file is created by us (`O_EXCL | O_NOFOLLOW`) before SQLite opens it,
and after every open the file is checked to be the regular file we checked (a link swapped in
meanwhile is refused before anything is written). An existing file must pass the caller's
`problem` check; a damaged or foreign one is removed with its companions and recreated. Every
connection runs in autocommit mode with a busy timeout, WAL and `synchronous = NORMAL` (a commit
lost in a power cut is written again by the next catch-up). What cannot be used or created raises
`CacheFileUnusable`, which each index turns into its own answer.

`SlowStatements` is an optional hook (off by default) that reports statements slower than a
threshold, for finding what makes a keystroke or a catch-up slow.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BUSY_TIMEOUT_MS = 5000
"""How long a statement waits for another connection's write lock before failing."""

COMPANION_SUFFIXES = ("", "-wal", "-shm", "-journal")
"""The file itself and the side files SQLite keeps beside it."""

MEMORY_PREFIX = ":memory:"
"""A cache "path" starting with this is no file: `:memory:` alone is one connection's private
database; `:memory:<name>` is a database in memory shared by this process's connections to the
same name (what a store falls back to when no cache file can be created, docs/reliability.md)."""


def is_in_memory(path: Path | str) -> bool:
    """True for a cache path that names a database in memory (see `MEMORY_PREFIX`)."""
    return os.fspath(path).startswith(MEMORY_PREFIX)


def _database_name(path: Path | str) -> tuple[str, bool]:
    """What `sqlite3.connect` is given for `path`, and whether it is a URI."""
    text = os.fspath(path)
    if text == MEMORY_PREFIX or not is_in_memory(text):
        return text, False
    return f"file:{text[len(MEMORY_PREFIX) :]}?mode=memory&cache=shared", True


@dataclass(frozen=True, slots=True)
class SlowStatements:
    """Report each statement that took at least `threshold_s` seconds: `report(sql, seconds)`.

    Timed until `execute`, `executemany` or `executescript` returns (for a query: its first row).
    """

    threshold_s: float
    report: Callable[[str, float], None]


class CacheFileUnusable(Exception):
    """A cache file that can be neither used nor created (`busy`: another process holds it)."""

    def __init__(self, reason: str, *, busy: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.busy = busy


class _TimedConnection(sqlite3.Connection):
    """A connection that reports its slow statements (see `SlowStatements`)."""

    slow: SlowStatements | None = None

    def _timed(self, sql: str, started: float) -> None:
        elapsed = time.perf_counter() - started
        if self.slow is not None and elapsed >= self.slow.threshold_s:
            self.slow.report(sql, elapsed)

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        """`sqlite3.Connection.execute`, timed."""
        started = time.perf_counter()
        try:
            return super().execute(sql, *args)
        finally:
            self._timed(sql, started)

    def executemany(self, sql: str, *args: Any) -> sqlite3.Cursor:
        """`sqlite3.Connection.executemany`, timed."""
        started = time.perf_counter()
        try:
            return super().executemany(sql, *args)
        finally:
            self._timed(sql, started)

    def executescript(self, sql: str, /) -> sqlite3.Cursor:
        """`sqlite3.Connection.executescript`, timed."""
        started = time.perf_counter()
        try:
            return super().executescript(sql)
        finally:
            self._timed(sql, started)


def connect_cache(
    path: Path | str, *, mmap_bytes: int | None = None, slow: SlowStatements | None = None
) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), usable from any thread.

    It waits up to `BUSY_TIMEOUT_MS` for a lock; `mmap_bytes` maps that much of the file into
    memory for reading; `slow` reports slow statements (a plain connection without it).
    """
    name, uri = _database_name(path)
    if slow is None:
        connection = sqlite3.connect(name, check_same_thread=False, isolation_level=None, uri=uri)
    else:
        connection = sqlite3.connect(
            name, check_same_thread=False, isolation_level=None, factory=_TimedConnection, uri=uri
        )
        assert isinstance(connection, _TimedConnection)
        connection.slow = slow
    connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    if mmap_bytes is not None:
        connection.execute(f"PRAGMA mmap_size = {mmap_bytes}")
    return connection


def remove_cache_files(path: Path) -> None:
    """Delete the file and its WAL/SHM/journal companions (missing ones are fine; links, not targets)."""
    for suffix in COMPANION_SUFFIXES:
        with contextlib.suppress(FileNotFoundError):
            os.remove(str(path) + suffix)


def is_busy(error: sqlite3.Error) -> bool:
    """True for errors that mean another connection holds the file (as opposed to damage)."""
    code = getattr(error, "sqlite_errorcode", None)
    if isinstance(code, int) and code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return True
    text = str(error).lower()
    return "locked" in text or "busy" in text


def _linked(path: Path) -> bool:
    return any(os.path.islink(str(path) + suffix) for suffix in COMPANION_SUFFIXES)


_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)

FileIdentity = tuple[int, int]
"""(st_dev, st_ino) of a file, to tell that the file SQLite opened is the one we checked."""


def regular_file_identity(path: Path | str) -> FileIdentity | None:
    """The identity of `path` when it is a regular file itself (not a link to one), else None."""
    try:
        status = os.lstat(path)
    except OSError:
        return None
    return (status.st_dev, status.st_ino) if stat.S_ISREG(status.st_mode) else None


def opened_as_checked(path: Path | str, identity: FileIdentity) -> bool:
    """True when `path` is still the regular file `identity` names and no companion is a link.

    Checked after SQLite opened it: SQLite opens by name and follows links, so a link swapped in
    between our check and its open is caught here, before anything is written.
    """
    return regular_file_identity(path) == identity and not _linked(Path(path))


def _create_empty(path: Path) -> FileIdentity:
    """Create `path` as a new empty regular file (never through a link); SQLite reads it as a new database."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC, 0o644)
    try:
        status = os.fstat(fd)
    finally:
        os.close(fd)
    return status.st_dev, status.st_ino


def _connect_checked(path: Path, identity: FileIdentity, slow: SlowStatements | None) -> sqlite3.Connection:
    connection = connect_cache(path, slow=slow)
    if not opened_as_checked(path, identity):
        connection.close()
        raise CacheFileUnusable(f"{path} changed while it was opened (a link was put in its place)")
    return connection


def _cache_settings(connection: sqlite3.Connection) -> None:
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = NORMAL")


def _open_in_memory(
    path: Path,
    *,
    create: Callable[[sqlite3.Connection], None],
    ready: Callable[[sqlite3.Connection], None] | None,
    slow: SlowStatements | None,
) -> sqlite3.Connection:
    connection = connect_cache(path, slow=slow)
    try:
        if connection.execute("SELECT count(*) FROM sqlite_master").fetchone() == (0,):
            create(connection)
        if ready is not None:
            ready(connection)
    except sqlite3.Error as error:
        connection.close()
        raise CacheFileUnusable(f"the in-memory {path} cannot be created ({error})") from error
    return connection


def open_cache_file(
    path: Path,
    *,
    what: str,
    problem: Callable[[sqlite3.Connection], str | None],
    create: Callable[[sqlite3.Connection], None],
    ready: Callable[[sqlite3.Connection], None] | None = None,
    damaged: str | None = None,
    log: logging.Logger,
    slow: SlowStatements | None = None,
) -> tuple[sqlite3.Connection, bool]:
    """A connection to a usable cache file at `path` and whether it was (re)created empty.

    An existing file is used when `problem(connection)` finds nothing wrong (it returns why the
    file cannot be used, or None); otherwise, or when `damaged` already says why, it is removed
    and `create(connection)` lays out a new one. `ready(connection)` then runs on either (e.g. to
    add tables a newer version needs). A rebuild is logged as "rebuilding the `what`". Raises
    `CacheFileUnusable` when the file is locked by another process, cannot be replaced or
    cannot be created.
    """
    if is_in_memory(path):
        return _open_in_memory(path, create=create, ready=ready, slow=slow), True
    reason = damaged
    existed = os.path.lexists(path)
    identity = regular_file_identity(path) if existed else None
    if existed and reason is None and _linked(path):
        reason = "it is a symbolic link (never followed)"
    elif existed and reason is None and identity is None:
        reason = "it is not a regular file"
    if existed and reason is None and identity is not None:
        connection: sqlite3.Connection | None = None
        try:
            connection = _connect_checked(path, identity, slow)
            reason = problem(connection)
            if reason is None:
                _cache_settings(connection)
                if ready is not None:
                    ready(connection)
                return connection, False
        except sqlite3.DatabaseError as error:
            if connection is not None:
                connection.close()
            if is_busy(error):
                raise CacheFileUnusable(
                    f"{path} is locked by another process ({error})", busy=True
                ) from error
            reason = f"it is unreadable ({error})"
        else:
            connection.close()
    if existed or damaged is not None:
        log.warning("rebuilding the %s %s: %s", what, path, reason)
        try:
            remove_cache_files(path)
        except OSError as error:
            raise CacheFileUnusable(f"{path} cannot be replaced ({error})") from error
    try:
        connection = _connect_checked(path, _create_empty(path), slow)
    except (OSError, sqlite3.Error) as error:
        raise CacheFileUnusable(f"{path} cannot be created ({error})") from error
    try:
        _cache_settings(connection)
        create(connection)
        if ready is not None:
            ready(connection)
    except (OSError, sqlite3.Error) as error:
        connection.close()
        raise CacheFileUnusable(f"{path} cannot be created ({error})") from error
    except BaseException:
        connection.close()
        raise
    return connection, True
