"""Cursor histories: the IDE's `globalStorage/state.vscdb` under the platform's Cursor user folder.

Read-only (format: docs/sources/cursor.md). The database is read through
`sqlite_snapshot.read_database` (nothing is written, created or locked beside it), and only when
one of its files changed; each conversation's change is its own `lastUpdatedAt`.

* **Listed**: every `composerData:<composerId>` row of `cursorDiskKV` (Cursor's format names no
  parent for a conversation, so none is hidden).
* **Projected**: the `bubbleId:<composerId>:<bubbleId>` rows of `type` 1 (user) and 2
  (assistant), their `text` (else `rawText`), in the order they were written; never thinking or
  tool data, which live in other fields.
* **Title**: the conversation's `name`, else the first prompt. **cwd**: unknown (the workspace
  mapping is not described well enough to rely on). **Times**: `createdAt`, `lastUpdatedAt`.

The agent's transcripts (`~/.cursor/projects/*/agent-transcripts/`) are another source, under
another root: `sessionref.sources.cursor_agent`.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Final

from sessionref.sources.database_chats import (
    ChatMessage,
    chat_session,
    chat_summary,
    count,
    first_prompt_title,
    gone,
    json_object,
    no_session_files,
    split_by_version,
)
from sessionref.sources.foreign import ForeignSession, ForeignSummary
from sessionref.sources.reader import DatabaseSessions, SessionFiles, WalkContext
from sessionref.sources.registry import registered
from sessionref.sources.scan import DatabaseOnlyScan, FileScan
from sessionref.sources.session_file import tool_title
from sessionref.sources.sqlite_snapshot import database_files, read_database, require_columns

__all__ = ["KIND", "READER", "CursorReader"]

KIND: Final = "cursor"
INFO: Final = registered(KIND)
UNKNOWN: Final = "unknown"
DATABASE: Final = ("globalStorage", "state.vscdb")
"""Where the conversations' database is under the Cursor user folder."""
COMPOSER_PREFIX: Final = "composerData:"
BUBBLE_PREFIX: Final = "bubbleId:"
USER_BUBBLE: Final = 1
ASSISTANT_BUBBLE: Final = 2
SCHEMA: Final[dict[str, tuple[str, ...]]] = {"cursorDiskKV": ("key", "value")}
"""The table and columns the reader needs (fewer is a schema it does not know)."""


def default_root(env: Mapping[str, str] | None = None, home: Path | None = None) -> Path:
    """`~/.config/Cursor/User`; on macOS `~/Library/Application Support/Cursor/User`."""
    base = Path.home() if home is None else home
    if sys.platform == "darwin":
        return base / "Library" / "Application Support" / "Cursor" / "User"
    return base / ".config" / "Cursor" / "User"


def bubble_text(bubble: Mapping[str, Any]) -> str | None:
    """The visible text of a bubble: its `text`, else its `rawText`; None when empty."""
    for field in ("text", "rawText"):
        text = bubble.get(field)
        if isinstance(text, str) and text.strip():
            return text
    return None


def _bubbles(connection: sqlite3.Connection, composer_id: str, time_ms: int) -> list[ChatMessage]:
    """The conversation's user and assistant bubbles with text, all at `time_ms` (bubbles carry no time)."""
    prefix = f"{BUBBLE_PREFIX}{composer_id}:"
    found: list[ChatMessage] = []
    # A key range, not LIKE: the composer id may hold `_` or `%`, and a range uses the key's index.
    for key, value in connection.execute(
        "SELECT key, value FROM cursorDiskKV WHERE key >= ? AND key < ? ORDER BY rowid",
        (prefix, f"{prefix[:-1]};"),
    ):
        data = json_object(value)
        kind = data.get("type")
        role = "user" if kind == USER_BUBBLE else "assistant" if kind == ASSISTANT_BUBBLE else ""
        text = bubble_text(data)
        if role and text is not None and isinstance(key, str):
            found.append(ChatMessage(key[len(prefix) :], role, time_ms, (text,), KIND, UNKNOWN))
    return found


def _times(composer: Mapping[str, Any]) -> tuple[int, int]:
    created = count(composer.get("createdAt"))
    return created, max(created, count(composer.get("lastUpdatedAt")))


def _summary(native_id: str, composer: Mapping[str, Any], path: Path, prompt: str | None) -> ForeignSummary:
    created, updated = _times(composer)
    title = composer.get("name")
    return chat_summary(
        KIND, native_id, path, cwd=None, created_ms=created, updated_ms=updated, title=title, prompt=prompt
    )


def _composers(connection: sqlite3.Connection) -> Iterator[tuple[str, dict[str, Any]]]:
    for key, value in connection.execute(
        "SELECT key, value FROM cursorDiskKV WHERE key >= ? AND key < ?",
        (COMPOSER_PREFIX, f"{COMPOSER_PREFIX[:-1]};"),
    ):
        native_id = key[len(COMPOSER_PREFIX) :] if isinstance(key, str) else None
        if native_id is not None:
            yield native_id, json_object(value)


class CursorDatabase:
    """The conversations of `state.vscdb`, by their own `lastUpdatedAt`."""

    def linked_files(self, root: Path) -> frozenset[str]:
        """None: the database is under the root."""
        return frozenset()

    def sessions(self, root: Path, files: SessionFiles, known: Mapping[str, str]) -> DatabaseSessions:
        """Every conversation; only new or changed ones are read further (for a missing name)."""
        path = files.paths[0]

        def query(connection: sqlite3.Connection) -> DatabaseSessions:
            require_columns(connection, SCHEMA)

            def summarize(native_id: str, composer: dict[str, Any]) -> ForeignSummary:
                named = tool_title(composer.get("name"))
                bubbles = [] if named else _bubbles(connection, native_id, _times(composer)[1])
                return _summary(native_id, composer, path, first_prompt_title(bubbles))

            rows = (
                (native_id, _times(composer)[1], composer) for native_id, composer in _composers(connection)
            )
            return split_by_version(rows, known, summarize)

        return read_database(root, path, query)


def _read_conversation(root: Path, path: Path, native_id: str) -> ForeignSession:
    def query(connection: sqlite3.Connection) -> ForeignSession:
        require_columns(connection, SCHEMA)
        row = connection.execute(
            "SELECT value FROM cursorDiskKV WHERE key = ?", (f"{COMPOSER_PREFIX}{native_id}",)
        ).fetchone()
        if row is None:
            raise gone(KIND, native_id)
        composer = json_object(row[0])
        bubbles = _bubbles(connection, native_id, _times(composer)[1])
        return chat_session(_summary(native_id, composer, path, first_prompt_title(bubbles)), bubbles)

    return read_database(root, path, query)


@dataclass(slots=True)
class CursorScan(DatabaseOnlyScan):
    """Never filled: Cursor's only files are its database, listed by `CursorDatabase`."""

    KIND: ClassVar[str] = "cursor"


class CursorReader:
    """Cursor as a `SourceReader`: the IDE's global `state.vscdb`."""

    info: Final = INFO
    scan_type: Final = CursorScan
    title_index: Final = None
    database: Final = CursorDatabase()

    def default_root(self, env: Mapping[str, str] | None = None, home: Path | None = None) -> Path:
        """The platform's Cursor user folder."""
        return default_root(env, home)

    def walk(self, root: Path) -> Iterator[SessionFiles]:
        """`globalStorage/state.vscdb` as one database group, when it is a regular file (reads nothing)."""
        path = root.joinpath(*DATABASE)
        if path.is_file() and not path.is_symlink() and not path.parent.is_symlink():
            yield SessionFiles(None, database_files(path), database=True)

    def scan(self, root: Path, path: Path, previous: FileScan | None) -> CursorScan:
        """Cursor has no per-session files: any other file is not one of its sessions."""
        raise no_session_files("Cursor", path)

    def summarize(
        self, root: Path, native_id: str | None, scans: Sequence[FileScan], context: WalkContext
    ) -> ForeignSummary | None:
        """None: every Cursor conversation comes from the database listing."""
        return None

    def read(self, root: Path, native_id: str, paths: Sequence[Path]) -> ForeignSession:
        """One conversation in full from the database."""
        return _read_conversation(root, paths[0], native_id)


READER: Final = CursorReader()
