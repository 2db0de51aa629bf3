"""Other agents' histories in the discovery index: two tables beside `logs`, validated on load.

`foreign_files` holds one row per history file (its resumable scan state), `foreign_sessions`
one row per session (what discovery lists). The meta key `foreign_caught_up` records, per
source, the root last walked and when: `sessionref sources` shows it, and a CLI query answers
from the index only when each source it wants was walked under the same root recently.

Rows are a cache and never trusted: a row is used only when its columns have the right types,
its source is one the store reads now, under the same root, and every path in it lies below
that root (lexically; reading then resolves symbolic links and refuses a file that leads out of
the root). Rows of a source switched off stay in the file, unused, so switching it on again does
not read every history again; rows of a root that no longer exists are deleted.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, TypeVar

from sessionref.contract.options import MAX_SAFE_INTEGER
from sessionref.sources import SOURCE_KINDS
from sessionref.sources.foreign import is_valid_native_id
from sessionref.store.foreign_links import holds, linked_files
from sessionref.store.foreign_state import ForeignEntry, ForeignFile, ForeignRoot

T = TypeVar("T")

log = logging.getLogger("sessionref.store")

FOREIGN_CAUGHT_UP_KEY: Final = "foreign_caught_up"
"""Meta key: `{kind: {"root": root, "at": epoch ms}}` of the last walk of each source."""

CREATE_FOREIGN_FILES: Final = (
    "CREATE TABLE foreign_files (\n"
    "    path TEXT PRIMARY KEY, kind TEXT NOT NULL, root TEXT NOT NULL, session_id TEXT,\n"
    "    size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, scan TEXT NOT NULL\n"
    ")"
)
CREATE_FOREIGN_SESSIONS: Final = (
    "CREATE TABLE foreign_sessions (\n"
    "    session_id TEXT PRIMARY KEY, kind TEXT NOT NULL, root TEXT NOT NULL, native_id TEXT NOT NULL,\n"
    "    cwd TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, title TEXT,\n"
    "    paths TEXT NOT NULL, version TEXT NOT NULL\n"
    ")"
)
_FILE_COLUMNS: Final = "path, kind, root, session_id, size, mtime_ns, scan"
_SESSION_COLUMNS: Final = (
    "session_id, kind, root, native_id, cwd, created_at, updated_at, title, paths, version"
)


def ensure_foreign_tables(connection: sqlite3.Connection, strict: bool) -> None:
    """Create both tables (STRICT when the SQLite supports it), replacing any of another shape."""
    suffix = " STRICT" if strict else ""
    tables = (("foreign_files", CREATE_FOREIGN_FILES), ("foreign_sessions", CREATE_FOREIGN_SESSIONS))
    for name, create in tables:
        row = connection.execute("SELECT sql FROM sqlite_master WHERE name = ?", (name,)).fetchone()
        if row is not None and row[0] == create + suffix:
            continue
        if row is not None:
            connection.execute(f"DROP TABLE {name}")
        connection.execute(create + suffix)


def _integer(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_SAFE_INTEGER


def _optional_text(value: object) -> bool:
    return value is None or type(value) is str


def file_of(
    row: Sequence[Any], sources: Mapping[str, ForeignRoot], linked: Mapping[str, frozenset[str]]
) -> ForeignFile | None:
    """A `foreign_files` row as a `ForeignFile`, or None when it is not usable for `sources` (`linked`:
    each source's files outside its root, `foreign_links`)."""
    path, kind, root, session_id, size, mtime_ns, scan = row
    source = sources.get(kind) if isinstance(kind, str) else None
    if source is None or root != source.root or not holds(path, source.root, linked.get(kind, frozenset())):
        return None
    if not _optional_text(session_id) or type(size) is not int or type(mtime_ns) is not int:
        return None
    if type(scan) is not str:
        return None
    return ForeignFile(path, source.kind, source.root, session_id, size, mtime_ns, scan)


def entry_of(
    row: Sequence[Any], sources: Mapping[str, ForeignRoot], linked: Mapping[str, frozenset[str]]
) -> ForeignEntry | None:
    """A `foreign_sessions` row as a `ForeignEntry`, or None when it is not usable for `sources` (`linked`:
    each source's files outside its root, `foreign_links`)."""
    session_id, kind, root, native_id, cwd, created_at, updated_at, title, paths_json, version = row
    source = sources.get(kind) if isinstance(kind, str) else None
    if source is None or root != source.root or not is_valid_native_id(native_id):
        return None
    if session_id != f"{source.kind}:{native_id}" or not (_optional_text(cwd) and _optional_text(title)):
        return None
    if not (_integer(created_at) and _integer(updated_at)) or type(version) is not str:
        return None
    try:
        paths = json.loads(paths_json) if type(paths_json) is str else None
    except (ValueError, RecursionError):
        return None
    outside = linked.get(source.kind, frozenset())
    if (
        not isinstance(paths, list)
        or not paths
        or not all(holds(path, source.root, outside) for path in paths)
    ):
        return None
    kind = source.kind
    return ForeignEntry(
        session_id, kind, source.root, native_id, cwd, created_at, updated_at, title, tuple(paths), version
    )


def _usable(
    rows: Iterable[Sequence[Any]],
    sources: Mapping[str, ForeignRoot],
    parse: Callable[[Sequence[Any], Mapping[str, ForeignRoot], Mapping[str, frozenset[str]]], T | None],
    linked: Mapping[str, frozenset[str]],
) -> tuple[list[T], int]:
    """The rows of `sources` (by their kind and root columns) that `parse` accepts, and how many it refused.

    Rows of other sources or roots are skipped, not counted: they are kept for when those are read again.
    """
    items: list[T] = []
    refused = 0
    for row in rows:
        if row[1] in sources and row[2] == sources[row[1]].root:
            item = parse(row, sources, linked)
            if item is None:
                refused += 1
            else:
                items.append(item)
    return items, refused


def _file_row(item: ForeignFile) -> tuple[object, ...]:
    return (item.path, item.kind, item.root, item.session_id, item.size, item.mtime_ns, item.scan)


def _session_row(entry: ForeignEntry) -> tuple[object, ...]:
    return (
        entry.session_id,
        entry.kind,
        entry.root,
        entry.native_id,
        entry.cwd,
        entry.created_at,
        entry.updated_at,
        entry.title,
        json.dumps(list(entry.paths), ensure_ascii=False),
        entry.version,
    )


def _storable(row: tuple[object, ...]) -> bool:
    try:
        for value in row:
            if isinstance(value, str):
                value.encode("utf-8")
    except UnicodeEncodeError:  # a name on disk that is not valid UTF-8 (surrogate-escaped)
        return False
    return True


class ForeignTables:
    """Load and save foreign rows through one connection; the caller serialises access (store lock).

    `connection()` returns the index's current connection (it changes when a damaged index is
    replaced); errors other than damage are logged, never raised: the index is a cache.
    """

    def __init__(self, index: Any) -> None:
        self._index = index

    def _rows(self, sql: str) -> list[tuple[Any, ...]]:
        try:
            return list(self._index.connection().execute(sql))
        except sqlite3.Error as error:
            log.warning("cannot read other agents' sessions from the discovery index: %s", error)
            return []

    def load(self, sources: Sequence[ForeignRoot]) -> tuple[dict[str, ForeignFile], dict[str, ForeignEntry]]:
        """The usable rows of `sources`: files by path, sessions by id (others are ignored, not dropped)."""
        by_kind: dict[str, ForeignRoot] = {source.kind: source for source in sources}
        if not by_kind:
            return {}, {}
        file_rows = self._rows(f"SELECT {_FILE_COLUMNS} FROM foreign_files")
        entry_rows = self._rows(f"SELECT {_SESSION_COLUMNS} FROM foreign_sessions")
        linked = {source.kind: linked_files(source) for source in sources}
        file_items, bad_files = _usable(file_rows, by_kind, file_of, linked)
        entry_items, bad_entries = _usable(entry_rows, by_kind, entry_of, linked)
        files = {item.path: item for item in file_items}
        entries = {entry.session_id: entry for entry in entry_items}
        unusable = bad_files + bad_entries
        if unusable:
            log.warning("ignoring %d unusable rows of other agents' sessions in the index", unusable)
        return files, entries

    def forget_gone_roots(self, sources: Sequence[ForeignRoot]) -> None:
        """Delete the rows of roots no source reads now and that no longer exist on disk."""
        wanted = {(source.kind, source.root) for source in sources}
        roots = {
            (kind, root)
            for table in ("foreign_files", "foreign_sessions")
            for kind, root in self._rows(f"SELECT DISTINCT kind, root FROM {table}")
        }
        for kind, root in roots - wanted:
            if not (isinstance(root, str) and os.path.isdir(root)):
                self.delete_root(kind, root)

    def delete_root(self, kind: object, root: object) -> None:
        """Forget everything indexed under one (source, root)."""
        for table in ("foreign_files", "foreign_sessions"):
            self._index.write(f"DELETE FROM {table} WHERE kind = ? AND root = ?", [(kind, root)])

    def save(
        self,
        files: Iterable[ForeignFile],
        deleted_files: Iterable[str],
        entries: Iterable[ForeignEntry],
        deleted_sessions: Iterable[str],
    ) -> None:
        """Write one walk's changes (rows holding text that is not valid Unicode are skipped)."""
        file_rows = [row for row in map(_file_row, files) if _storable(row)]
        session_rows = [row for row in map(_session_row, entries) if _storable(row)]
        if file_rows:
            marks = ", ".join("?" for _ in range(7))
            sql = f"INSERT OR REPLACE INTO foreign_files ({_FILE_COLUMNS}) VALUES ({marks})"
            self._index.write(sql, file_rows)
        gone_files = [(path,) for path in deleted_files]
        if gone_files:
            self._index.write("DELETE FROM foreign_files WHERE path = ?", gone_files)
        if session_rows:
            marks = ", ".join("?" for _ in range(10))
            self._index.write(
                f"INSERT OR REPLACE INTO foreign_sessions ({_SESSION_COLUMNS}) VALUES ({marks})", session_rows
            )
        gone_sessions = [(session_id,) for session_id in deleted_sessions]
        if gone_sessions:
            self._index.write("DELETE FROM foreign_sessions WHERE session_id = ?", gone_sessions)

    def caught_up(self) -> dict[str, dict[str, Any]]:
        """`{kind: {"root", "at"}}` of the last walk of each source (malformed parts left out)."""
        rows = self._rows(f"SELECT value FROM meta WHERE key = '{FOREIGN_CAUGHT_UP_KEY}'")
        return parse_caught_up(rows[0][0] if rows else None)

    def mark_caught_up(self, walked: Mapping[ForeignRoot, int]) -> None:
        """Record that each source in `walked` was walked (under its root) at the given time."""
        if not walked:
            return
        value = self.caught_up()
        for source, at in walked.items():
            value[source.kind] = {"root": source.root, "at": at}
        self._index.write(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
            [(FOREIGN_CAUGHT_UP_KEY, json.dumps(value, ensure_ascii=False))],
        )


def parse_caught_up(text: object) -> dict[str, dict[str, Any]]:
    """The `foreign_caught_up` meta value, keeping only well-formed parts."""
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except (ValueError, RecursionError):
        value = None
    if not isinstance(value, dict):
        return {}
    return {
        kind: {"root": item["root"], "at": item["at"]}
        for kind, item in value.items()
        if kind in SOURCE_KINDS
        and isinstance(item, dict)
        and isinstance(item.get("root"), str)
        and _integer(item.get("at"))
    }
