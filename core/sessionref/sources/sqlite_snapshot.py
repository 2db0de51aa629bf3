"""Reading an SQLite database another agent owns, without writing, creating or locking anything in its folder.

SQLite opened with `mode=ro` still creates `-wal`/`-shm` beside a WAL database when they are
missing, and writes read marks into a live `-shm`; the other agent may also be writing right now.
So (docs/sources/other-agents.md, "Databases"):

* **No WAL file (or an empty one)**: the database file alone holds every committed page. It is
  opened with `immutable=1` (no locks, no `-wal`/`-shm`, no writes) and its size and mtime are
  checked before and after the read: a file that changed meanwhile is read again.
* **A WAL file with content** (the agent is running, or stopped without a checkpoint): the
  database and its WAL are copied into a private temporary folder, the copy checked the same
  way (both files' size and mtime unchanged across the copy), and the copy is opened; SQLite
  recovers the WAL into *our* copy. A copy larger than `COPY_LIMIT_BYTES` is not made: the
  database file is read `immutable=1` and the newest, uncheckpointed changes are missed.
* A read that keeps meeting a changing file, or `SQLITE_BUSY`, is retried `ATTEMPTS` times
  (backing off) and then refused with `FOREIGN_DATABASE_BUSY`; a corrupt or half-written file
  is `FOREIGN_DATABASE_UNREADABLE`; tables or columns a reader needs and does not find are
  `FOREIGN_DATABASE_SCHEMA_UNKNOWN` (`require_columns`). A refused database is skipped with a
  warning, never a failed store.

The path is never opened when missing (SQLite would create it), and must resolve inside the
source root (no symlink out of the agent's folder is followed) — or be one of the `linked`
databases the source's own listing names outside it (Crush's per-project databases), and then
be exactly that path, a regular file reached through no symlink at all.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import tempfile
import time
import urllib.parse
from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path
from typing import Final, TypeVar

from sessionref.sources.foreign import ForeignSourceError, ForeignSourceErrorCode
from sessionref.sources.lines import is_inside

__all__ = [
    "ATTEMPTS",
    "COPY_LIMIT_BYTES",
    "database_files",
    "read_database",
    "require_columns",
]

T = TypeVar("T")

ATTEMPTS: Final = 4
"""Reads of a database that keeps changing (or is busy) before it is refused as busy."""
BACKOFF_SECONDS: Final = 0.05
"""The first pause between attempts (doubled each time)."""
COPY_LIMIT_BYTES: Final = 1 << 30
"""Above this size (database plus WAL) no private copy is made (see the module)."""
WAL_SUFFIX: Final = "-wal"
SHM_SUFFIX: Final = "-shm"


def database_files(path: Path) -> tuple[Path, ...]:
    """The database and, when they exist, its `-wal` and `-shm` (the files whose change is a change)."""
    found = [path]
    for suffix in (WAL_SUFFIX, SHM_SUFFIX):
        companion = Path(f"{path}{suffix}")
        if companion.is_file():
            found.append(companion)
    return tuple(found)


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns


def _checked_path(root: Path, path: Path, linked: Collection[str]) -> Path:
    real = os.path.realpath(path)
    if str(path) in linked:
        if real != str(path):
            raise ForeignSourceError(
                ForeignSourceErrorCode.OUTSIDE_ROOT, f"{str(path)!r} is reached through a symbolic link"
            )
    elif not is_inside(real, os.path.realpath(root)):
        raise ForeignSourceError(
            ForeignSourceErrorCode.OUTSIDE_ROOT, f"{str(path)!r} resolves outside the source root"
        )
    if not os.path.isfile(real):
        raise ForeignSourceError(ForeignSourceErrorCode.UNREADABLE, f"{str(path)!r} is not a database file")
    return Path(real)


def _immutable_uri(path: Path) -> str:
    return f"file:{urllib.parse.quote(str(path))}?mode=ro&immutable=1"


def _copy_stable(database: Path, wal: Path, folder: Path) -> Path | None:
    """Copy the database and its WAL into `folder`; None when either changed during the copy."""
    before = (_stat(database), _stat(wal))
    target = folder / "copy.db"
    shutil.copyfile(database, target)
    if before[1] is not None:
        shutil.copyfile(wal, Path(f"{target}{WAL_SUFFIX}"))
    return target if (_stat(database), _stat(wal)) == before else None


def _attempt(database: Path, query: Callable[[sqlite3.Connection], T]) -> tuple[bool, T | None]:
    """One consistent read: `(True, result)`, or `(False, None)` when the files moved under it."""
    wal = Path(f"{database}{WAL_SUFFIX}")
    wal_state = _stat(wal)
    sizes = (_stat(database) or (0, 0))[0] + (wal_state or (0, 0))[0]
    if wal_state is None or wal_state[0] == 0 or sizes > COPY_LIMIT_BYTES:
        before = (_stat(database), wal_state)
        with contextlib.closing(sqlite3.connect(_immutable_uri(database), uri=True)) as connection:
            result = query(connection)
        return (_stat(database), _stat(wal)) == before, result
    with tempfile.TemporaryDirectory(prefix="sessionref-db-") as folder:
        copy = _copy_stable(database, wal, Path(folder))
        if copy is None:
            return False, None
        with contextlib.closing(sqlite3.connect(copy)) as connection:
            return True, query(connection)


def read_database(
    root: Path, path: Path, query: Callable[[sqlite3.Connection], T], linked: Collection[str] = ()
) -> T:
    """`query(connection)` on a consistent, read-only view of the database at `path` (see the module).

    `linked`: databases outside `root` the source's own listing names (see the module).

    Raises `ForeignSourceError`: `FOREIGN_DATABASE_BUSY`, `FOREIGN_DATABASE_UNREADABLE`,
    `FOREIGN_DATABASE_SCHEMA_UNKNOWN` (from `require_columns`), or a path error.
    """
    database = _checked_path(root, path, linked)
    pause = BACKOFF_SECONDS
    for attempt in range(ATTEMPTS):
        try:
            stable, result = _attempt(database, query)
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) and "busy" not in str(error):
                raise _unreadable(path, error) from error
            stable, result = False, None
        except (sqlite3.DatabaseError, OSError) as error:
            raise _unreadable(path, error) from error
        if stable:
            return result  # type: ignore[return-value]  # a stable attempt always carries its result
        if attempt + 1 < ATTEMPTS:
            time.sleep(pause)  # backing off from a writer, not waiting for an event
            pause *= 2
    raise ForeignSourceError(
        ForeignSourceErrorCode.DATABASE_BUSY,
        f"{str(path)!r} kept changing while it was read; it is read again later",
    )


def _unreadable(path: Path, error: BaseException) -> ForeignSourceError:
    return ForeignSourceError(
        ForeignSourceErrorCode.DATABASE_UNREADABLE, f"cannot read the database {str(path)!r}: {error}"
    )


def require_columns(connection: sqlite3.Connection, tables: Mapping[str, Iterable[str]]) -> None:
    """Check the database has these tables with (at least) these columns; raises `DATABASE_SCHEMA`."""
    for table, columns in tables.items():
        found = {row[1] for row in connection.execute("SELECT * FROM pragma_table_info(?)", (table,))}
        missing = [column for column in columns if column not in found]
        if not found or missing:
            what = f"table {table!r}" if not found else f"columns {', '.join(missing)} of {table!r}"
            raise ForeignSourceError(
                ForeignSourceErrorCode.DATABASE_SCHEMA,
                f"the database has no {what}: a schema this version does not know",
            )
