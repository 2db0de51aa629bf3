"""OpenCode histories: `${XDG_DATA_HOME:-~/.local/share}/opencode/opencode.db` and the older JSON tree.

Read-only (format: docs/sources/opencode.md). The database is read through
`sqlite_snapshot.read_database` (nothing is written, created or locked beside it), and only when
one of its files changed; each session's change is its own `time_updated`. An install that has
not migrated yet keeps `storage/session/<project>/<session>.json`, one file per session, with
its messages and parts in `storage/message/<session>/` and `storage/part/<message>/`.

* **Listed**: sessions without a `parent_id` (a child is a task or sub-agent session OpenCode
  hides from its own list; its text is its own, never in the parent's snapshot).
* **Projected**: `text` parts of `user` and `assistant` messages, in message then part order;
  never `reasoning`, `tool`, `file` or other parts, nor text parts marked `synthetic` or
  `ignored` (what OpenCode injects itself).
* **Title**: the session's `title`, unless it is the placeholder ("New session - <time>"): then
  the first prompt. **cwd**: the session's `directory`. **Times**: `time_created`,
  `time_updated` (epoch ms).
"""

from __future__ import annotations

import os
import sqlite3
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
    split_by_version,
    xdg_data_folder,
)
from sessionref.sources.foreign import (
    ForeignSession,
    ForeignSourceError,
    ForeignSourceErrorCode,
    ForeignSummary,
    foreign_session_id,
    is_valid_native_id,
)
from sessionref.sources.lines import read_small_text
from sessionref.sources.reader import DatabaseSessions, SessionFiles, WalkContext
from sessionref.sources.registry import registered
from sessionref.sources.scan import FileScan
from sessionref.sources.session_file import tool_title
from sessionref.sources.sqlite_snapshot import database_files, read_database, require_columns
from sessionref.sources.walking import list_dirs, list_files, real_root

__all__ = ["KIND", "READER", "LegacySessionScan", "OpenCodeReader"]

KIND: Final = "opencode"
INFO: Final = registered(KIND)
UNKNOWN: Final = "unknown"
LEGACY_MAX_BYTES: Final = 4 << 20
"""A legacy JSON file larger than this is not read."""
SCHEMA: Final[dict[str, tuple[str, ...]]] = {
    "session": ("id", "parent_id", "directory", "title", "time_created", "time_updated"),
    "message": ("id", "session_id", "time_created", "data"),
    "part": ("id", "message_id", "session_id", "data"),
}
"""The tables and columns the reader needs (more columns are fine; fewer is a schema it does not know)."""


def default_root(env: Mapping[str, str] | None = None, home: Path | None = None) -> Path:
    """`$XDG_DATA_HOME/opencode` when that variable is set, else `~/.local/share/opencode`."""
    return xdg_data_folder("opencode", env, home)


def _mapping(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def visible_text(part: Mapping[str, Any]) -> str | None:
    """The text of a part a person or the model wrote, or None (reasoning, tools, injected text)."""
    if part.get("type") != "text" or part.get("synthetic") is True or part.get("ignored") is True:
        return None
    text = part.get("text")
    return text if isinstance(text, str) and text.strip() else None


def _message(message_id: str, data: Mapping[str, Any], time: int, texts: Sequence[str]) -> ChatMessage:
    role = data.get("role")
    model = data.get("modelID")
    provider = data.get("providerID")
    return ChatMessage(
        message_id,
        role if isinstance(role, str) else "",
        time,
        tuple(texts),
        provider if isinstance(provider, str) and provider else KIND,
        model if isinstance(model, str) and model else UNKNOWN,
    )


# -- the database -------------------------------------------------------------------------------


def _database_messages(connection: sqlite3.Connection, session_id: str) -> list[ChatMessage]:
    parts: dict[str, list[str]] = {}
    for message_id, data in connection.execute(
        "SELECT message_id, data FROM part WHERE session_id = ? ORDER BY message_id, id", (session_id,)
    ):
        text = visible_text(json_object(data))
        if text is not None and isinstance(message_id, str):
            parts.setdefault(message_id, []).append(text)
    return [
        _message(message_id, json_object(data), count(created), parts.get(message_id, []))
        for message_id, created, data in connection.execute(
            "SELECT id, time_created, data FROM message WHERE session_id = ? ORDER BY time_created, id",
            (session_id,),
        )
        if isinstance(message_id, str)
    ]


def _summary(
    native_id: str,
    directory: object,
    title: object,
    created: object,
    updated: object,
    path: Path,
    prompt: str | None,
) -> ForeignSummary:
    cwd = directory if isinstance(directory, str) and directory.startswith("/") else None
    return chat_summary(
        KIND,
        native_id,
        path,
        cwd=cwd,
        created_ms=count(created),
        updated_ms=count(updated),
        title=title,
        prompt=prompt,
    )


class OpenCodeDatabase:
    """The sessions of `opencode.db`, by its own `time_updated`."""

    def linked_files(self, root: Path) -> frozenset[str]:
        """None: the database is under the root."""
        return frozenset()

    def sessions(self, root: Path, files: SessionFiles, known: Mapping[str, str]) -> DatabaseSessions:
        """Top-level sessions; only new or changed ones are read further (for a placeholder title)."""
        path = files.paths[0]

        def query(connection: sqlite3.Connection) -> DatabaseSessions:
            require_columns(connection, SCHEMA)
            rows = connection.execute(
                "SELECT id, directory, title, time_created, time_updated FROM session WHERE parent_id IS NULL"
            )

            def summarize(native_id: str, row: tuple[object, object, object, object]) -> ForeignSummary:
                directory, title, created, updated = row
                prompt = (
                    None
                    if tool_title(title)
                    else first_prompt_title(_database_messages(connection, native_id))
                )
                return _summary(native_id, directory, title, created, updated, path, prompt)

            return split_by_version(
                (
                    (native_id, max(count(created), count(updated)), (directory, title, created, updated))
                    for native_id, directory, title, created, updated in rows
                ),
                known,
                summarize,
            )

        return read_database(root, path, query)


def _read_database_session(root: Path, path: Path, native_id: str) -> ForeignSession:
    def query(connection: sqlite3.Connection) -> ForeignSession:
        require_columns(connection, SCHEMA)
        row = connection.execute(
            "SELECT directory, title, time_created, time_updated FROM session WHERE id = ?", (native_id,)
        ).fetchone()
        if row is None:
            raise gone(KIND, native_id)
        messages = _database_messages(connection, native_id)
        directory, title, created, updated = row
        prompt = first_prompt_title(messages)
        return chat_session(_summary(native_id, directory, title, created, updated, path, prompt), messages)

    return read_database(root, path, query)


# -- the legacy JSON tree -----------------------------------------------------------------------


@dataclass(slots=True)
class LegacySessionScan(FileScan):
    """A legacy `storage/session/<project>/<id>.json` read whole (it is small)."""

    KIND: ClassVar[str] = "opencode-legacy"

    native_id: str | None = None
    parent: bool = False
    title: str | None = None

    def wants(self, raw: bytes) -> bool:
        return False

    def take(self, number: int, record: dict[str, Any]) -> None:
        return None

    def record_time(self, record: dict[str, Any]) -> int | None:
        return None


def _legacy_document(root: Path, path: Path) -> dict[str, Any]:
    text = read_small_text(root, path, LEGACY_MAX_BYTES)
    return json_object(text) if text is not None else {}


def _legacy_scan(root: Path, path: Path, previous: LegacySessionScan | None) -> LegacySessionScan:
    try:
        info = os.stat(path)
    except OSError as error:
        raise ForeignSourceError(ForeignSourceErrorCode.UNREADABLE, f"cannot stat {str(path)!r}") from error
    if previous is not None and (previous.path, previous.size, previous.mtime_ns) == (
        str(path),
        info.st_size,
        info.st_mtime_ns,
    ):
        return previous
    document = _legacy_document(root, path)
    times = _mapping(document.get("time"))
    native_id = document.get("id")
    scan = LegacySessionScan(path=str(path), size=info.st_size, mtime_ns=info.st_mtime_ns)
    scan.native_id = native_id if is_valid_native_id(native_id) else None
    scan.parent = bool(document.get("parentID"))
    directory = document.get("directory")
    scan.cwd = directory if isinstance(directory, str) and directory.startswith("/") else None
    scan.created_at = count(times.get("created"))
    scan.updated_at = max(scan.created_at, count(times.get("updated")))
    scan.title = tool_title(document.get("title"))
    return scan


def _legacy_messages(root: Path, storage: Path, native_id: str) -> list[ChatMessage]:
    inside = real_root(root)
    found: list[tuple[int, str, ChatMessage]] = []
    for path in list_files(storage / "message" / native_id, inside, "", (".json",)):
        data = _legacy_document(root, path)
        message_id = data.get("id")
        if not isinstance(message_id, str) or not is_valid_native_id(message_id):
            continue
        times = _mapping(data.get("time"))
        texts = [
            text
            for part_path in list_files(storage / "part" / message_id, inside, "", (".json",))
            if (text := visible_text(_legacy_document(root, part_path))) is not None
        ]
        created = count(times.get("created"))
        found.append((created, message_id, _message(message_id, data, created, texts)))
    found.sort(key=lambda item: (item[0], item[1]))
    return [message for _, _, message in found]


class OpenCodeReader:
    """OpenCode as a `SourceReader`: its database, else its legacy JSON tree."""

    info: Final = INFO
    scan_type: Final = LegacySessionScan
    title_index: Final = None
    database: Final = OpenCodeDatabase()

    def default_root(self, env: Mapping[str, str] | None = None, home: Path | None = None) -> Path:
        """`$XDG_DATA_HOME/opencode`, else `~/.local/share/opencode`."""
        return default_root(env, home)

    def walk(self, root: Path) -> Iterator[SessionFiles]:
        """Each `opencode*.db` as one database group; else the legacy session files (reads none)."""
        inside = real_root(root)
        databases = [path for path in list_files(root, inside, "opencode", (".db",))]
        for path in databases:
            yield SessionFiles(None, database_files(path), database=True)
        if databases:
            return  # migrated: the legacy tree, if left behind, is what the database already holds
        for project in list_dirs(root / "storage" / "session", inside):
            for path in list_files(project, inside, "", (".json",)):
                yield SessionFiles(None, (path,))

    def scan(self, root: Path, path: Path, previous: FileScan | None) -> LegacySessionScan:
        """A legacy session file read whole, unless unchanged."""
        return _legacy_scan(root, path, previous if isinstance(previous, LegacySessionScan) else None)

    def summarize(
        self, root: Path, native_id: str | None, scans: Sequence[FileScan], context: WalkContext
    ) -> ForeignSummary | None:
        """A legacy session's facts; None for a child session or one without an id."""
        (scan,) = scans
        if not isinstance(scan, LegacySessionScan) or scan.native_id is None or scan.parent:
            return None
        title = scan.title or first_prompt_title(_legacy_messages(root, root / "storage", scan.native_id))
        return ForeignSummary(
            session_id=foreign_session_id(KIND, scan.native_id),
            source_kind=KIND,
            native_id=scan.native_id,
            cwd=scan.cwd,
            created_at=scan.created_at or 0,
            updated_at=scan.updated_at or 0,
            title=title,
            paths=(Path(scan.path),),
        )

    def read(self, root: Path, native_id: str, paths: Sequence[Path]) -> ForeignSession:
        """One session in full, from the database or the legacy tree."""
        path = paths[0]
        if path.suffix == ".db":
            return _read_database_session(root, path, native_id)
        scan = _legacy_scan(root, path, None)
        messages = _legacy_messages(root, root / "storage", native_id)
        summary = ForeignSummary(
            foreign_session_id(KIND, native_id),
            KIND,
            native_id,
            scan.cwd,
            scan.created_at or 0,
            scan.updated_at or 0,
            scan.title or first_prompt_title(messages),
            (path,),
        )
        return chat_session(summary, messages)


READER: Final = OpenCodeReader()
