"""Candidate search straight from the discovery index file: one read-only SQLite query, no open.

A command that answers one question and exits (`sessionref sessions parser --limit 5`, called in
a loop by a script) should not load the whole catalogue and walk every log each time. This asks
the index itself for exactly what `list_candidates` returns (`CandidateSearch` semantics): same
cwd first, then sessions without a cwd, then the others; most recent activity first (then id);
a case-insensitive substring of the id, cwd or label with Python's `str.lower`. Duplicate ids,
broken logs and rows of the wrong shape are left out as the catalogue leaves them out.

Freshness: the index holds everything sessionref wrote (every append updates its row at once), and
what other programs wrote up to the last walk over the logs (`caught_up_at`, recorded by every full
open and background catch-up). `query_index` answers only when that walk is at most `max_age`
seconds old; otherwise (or when the index is missing, locked, of another version or damaged) it
returns None and the caller opens the store, which catches up and records a new walk. Nothing is
ever written here: the file is opened read-only.

Other agents' sessions (`sources`) are answered the same way, from `foreign_sessions`: only for the
sources asked for, only when each was walked under the same root within `max_age` and its root
still exists, and only rows whose files lie below that root.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from sessionref.service.candidates import matches_needle
from sessionref.service.protocols import SessionRecord
from sessionref.store.cache_file import opened_as_checked, regular_file_identity
from sessionref.store.foreign_index import FOREIGN_CAUGHT_UP_KEY, parse_caught_up
from sessionref.store.foreign_links import holds, linked_files
from sessionref.store.foreign_state import ForeignRoot
from sessionref.store.index import (
    _CREATE_LOGS,
    _WELL_TYPED,
    CAUGHT_UP_KEY,
    SCHEMA_VERSION,
    STRICT_TABLES,
    index_path_for,
)
from sessionref.store.layout import decode_session_segment
from sessionref.store.logfile import is_compressed
from sessionref.store.paths import log_path_shape

READ_TIMEOUT_MS = 1_000
"""How long a query waits for a writer's lock on the index before the caller opens the store."""

_VALID = "problem IS NULL AND session_id IS NOT NULL" + ("" if STRICT_TABLES else f" AND {_WELL_TYPED}")
# Whether a text column may hold the needle. SQLite's LIKE folds ASCII letters only: for ASCII
# text (one byte per character, no NUL) it is exactly `needle in text.lower()`, and it never
# matches where Python would not; text with other characters goes to Python (`py_contains`) when
# LIKE says no. Every row this lets through is checked again in Python (`matches_needle`).
_MAY_MATCH = (
    "({col} LIKE :pattern ESCAPE '\\' OR (length({col}) != length(CAST({col} AS BLOB))"
    " AND py_contains({col}, :needle)))"
)
_LABEL = "coalesce(title, fallback, session_id)"
_FILTER = " OR ".join(_MAY_MATCH.format(col=col) for col in ("session_id", "cwd", _LABEL))
_RANKED = (
    "SELECT path, session_id, cwd, created_at, coalesce(last_time, created_at), " + _LABEL + " FROM logs"
    " WHERE " + _VALID + " AND (:needle = '' OR " + _FILTER + ")"
    " ORDER BY CASE WHEN cwd IS NULL THEN 1 WHEN cwd = :target THEN 0 ELSE 2 END,"
    " coalesce(last_time, created_at) DESC, session_id LIMIT :cap"
)
# With other agents' sessions: the logs' valid rows and the asked sources' rows, ranked together.
_UNION = (
    "SELECT path, session_id, cwd, created_at, activity, label, kind, root FROM ("
    "SELECT path, session_id, cwd, created_at, coalesce(last_time, created_at) AS activity, "
    + _LABEL
    + " AS label, NULL AS kind, NULL AS root FROM logs WHERE "
    + _VALID
    + " UNION ALL "
    "SELECT paths, session_id, cwd, created_at, updated_at, coalesce(title, session_id), kind, root"
    " FROM foreign_sessions WHERE {sources})"
    " WHERE (:needle = '' OR "
    + " OR ".join(_MAY_MATCH.format(col=col) for col in ("session_id", "cwd", "label"))
    + ") ORDER BY CASE WHEN cwd IS NULL THEN 1 WHEN cwd = :target THEN 0 ELSE 2 END,"
    " activity DESC, session_id LIMIT :cap"
)
_SAME_ID = "SELECT path, session_id FROM logs WHERE " + _VALID + " AND session_id IN ({marks})"
_ANY = f"SELECT 1 FROM logs WHERE {_VALID} LIMIT 1"
_ANY_FOREIGN = "SELECT 1 FROM foreign_sessions WHERE kind = ? AND root = ? LIMIT 1"
_FIRST_CAP = 32
"""Rows asked for beyond `limit` at first (duplicates and excluded rows are skipped); doubled if short."""


@dataclass(frozen=True, slots=True)
class IndexAnswer:
    """Candidates from the index as (record, label) pairs, and whether the store has any session."""

    found: list[tuple[SessionRecord, str]]
    any_sessions: bool


def _py_contains(text: object, needle: object) -> int:
    return int(isinstance(text, str) and isinstance(needle, str) and needle in text.lower())


def _preference(path: str, session_id: str) -> tuple[int, int, str]:
    """The catalogue's choice among logs of one id: canonical folder, then plain log, then path."""
    folder = path.rsplit("/", 2)[-2]
    return (0 if decode_session_segment(folder) == session_id else 1, 1 if is_compressed(path) else 0, path)


def _connect(path: Path) -> sqlite3.Connection:
    uri = f"file:{quote(os.fspath(path))}?mode=ro"
    connection = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=READ_TIMEOUT_MS / 1000)
    connection.create_function("py_contains", 2, _py_contains, deterministic=True)
    return connection


def _fresh_enough(connection: sqlite3.Connection, max_age: float, now_ms: int) -> bool:
    rows = dict(connection.execute("SELECT key, value FROM meta").fetchall())
    table = connection.execute("SELECT sql FROM sqlite_master WHERE name = 'logs'").fetchone()
    if rows.get("schema_version") != SCHEMA_VERSION or table != (_CREATE_LOGS,):
        return False
    try:
        caught_up_at = int(rows.get(CAUGHT_UP_KEY, ""))
    except ValueError:
        return False
    return 0 <= now_ms - caught_up_at <= max_age * 1000


def _sources_fresh(
    connection: sqlite3.Connection, sources: Sequence[ForeignRoot], max_age: float, now_ms: int
) -> bool:
    """Whether every source asked for was walked under its root within `max_age` and still exists."""
    if not sources:
        return True
    row = connection.execute("SELECT value FROM meta WHERE key = ?", (FOREIGN_CAUGHT_UP_KEY,)).fetchone()
    walked = parse_caught_up(row[0] if row else None)
    for source in sources:
        last = walked.get(source.kind)
        if last is None or last["root"] != source.root or not 0 <= now_ms - last["at"] <= max_age * 1000:
            return False
        if not os.path.isdir(source.root):  # a root that disappeared takes its sessions with it
            return False
    return True


def _foreign_row_usable(
    row: Sequence[object], sources: dict[str, str], linked: Mapping[str, frozenset[str]]
) -> bool:
    """A `foreign_sessions` row of an asked source whose files all lie below its root (or are `linked`)."""
    kind, root, paths = row[6], row[7], row[0]
    if not isinstance(kind, str) or sources.get(kind) != root or not isinstance(root, str):
        return False
    try:
        listed = json.loads(paths) if isinstance(paths, str) else None
    except (ValueError, RecursionError):
        return False
    outside = linked.get(kind, frozenset())
    return isinstance(listed, list) and bool(listed) and all(holds(path, root, outside) for path in listed)


def _losers(connection: sqlite3.Connection, session_ids: set[str]) -> set[str]:
    """Paths among `session_ids`' logs that another log of the same id wins (usually none)."""
    if not session_ids:
        return set()
    marks = ", ".join("?" for _ in session_ids)
    by_id: dict[str, list[str]] = {}
    for path, session_id in connection.execute(_SAME_ID.format(marks=marks), sorted(session_ids)):
        if log_path_shape(path):
            by_id.setdefault(session_id, []).append(path)
    losers: set[str] = set()
    for session_id, paths in by_id.items():
        winner = min(paths, key=lambda path: _preference(path, session_id))
        losers.update(path for path in paths if path != winner)
    return losers


def _like_pattern(needle: str) -> str:
    escaped = needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _candidates(
    connection: sqlite3.Connection,
    exclude_id: str,
    target_cwd: str | None,
    needle: str,
    limit: int,
    sources: Sequence[ForeignRoot] = (),
) -> list[tuple[SessionRecord, str]]:
    parameters: dict[str, object] = {"needle": needle, "target": target_cwd, "pattern": _like_pattern(needle)}
    asked: dict[str, str] = {source.kind: source.root for source in sources}
    linked = {source.kind: linked_files(source) for source in sources}
    query = _RANKED
    if asked:
        clauses = []
        for index, (kind, root) in enumerate(asked.items()):
            clauses.append(f"(kind = :kind{index} AND root = :root{index})")
            parameters[f"kind{index}"], parameters[f"root{index}"] = kind, root
        query = _UNION.format(sources=" OR ".join(clauses))
    cap = limit + _FIRST_CAP
    while True:
        parameters["cap"] = cap
        raw = connection.execute(query, parameters).fetchall()
        rows = [
            row
            for row in raw
            if row[1] != exclude_id
            and (
                _foreign_row_usable(row, asked, linked)
                if asked and row[6] is not None
                else log_path_shape(row[0])
            )
            and (not needle or matches_needle(needle, row[1], row[2], row[5]))
        ]
        losers = _losers(connection, {row[1] for row in rows if not asked or row[6] is None})
        found = [
            (SessionRecord(row[1], row[3], row[2], row[4]), row[5])
            for row in rows
            if row[0] not in losers or (asked and row[6] is not None)
        ]
        if len(found) >= limit or len(raw) < cap:  # enough, or every matching row was seen
            return found[:limit]
        cap *= 4


def _sqlite_text(text: str | None) -> bool:
    """Whether SQLite can take `text` as a parameter (it must encode as UTF-8)."""
    if text is None:
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def query_index(
    root: str | os.PathLike[str],
    *,
    exclude_id: str,
    target_cwd: str | None,
    needle: str,
    limit: int,
    max_age: float,
    now_ms: int | None = None,
    sources: Sequence[ForeignRoot] = (),
) -> IndexAnswer | None:
    """Up to `limit` candidates ranked like `list_candidates` (`needle` already lower-cased).

    None when the index cannot answer: missing, locked, of another version, damaged, last
    caught up with the logs (or with one of `sources`) more than `max_age` seconds ago (see the
    module doc), or asked for text SQLite cannot take (a lone surrogate, as a command-line argument
    that is not UTF-8 arrives): the caller then asks the opened store, which compares in Python.
    """
    if not all(_sqlite_text(text) for text in (exclude_id, target_cwd, needle)):
        return None
    path = index_path_for(Path(root).expanduser().absolute(), create=False)
    identity = regular_file_identity(path)  # a link named like the index is never opened
    if identity is None:
        return None
    now = time.time_ns() // 1_000_000 if now_ms is None else now_ms
    try:
        connection = _connect(path)
    except sqlite3.Error:
        return None
    if not opened_as_checked(path, identity):
        connection.close()
        return None
    try:
        fresh = _fresh_enough(connection, max_age, now) and _sources_fresh(connection, sources, max_age, now)
        if not fresh:
            return None
        found = _candidates(connection, exclude_id, target_cwd, needle, limit, sources) if limit > 0 else []
        any_sessions = (
            bool(found)
            or connection.execute(_ANY).fetchone() is not None
            or any(
                connection.execute(_ANY_FOREIGN, (source.kind, source.root)).fetchone() is not None
                for source in sources
            )
        )
        return IndexAnswer(found, any_sessions)
    except sqlite3.Error:
        return None
    finally:
        connection.close()
