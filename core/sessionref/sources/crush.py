"""Crush histories: `<project>/.crush/crush.db` for each project `crush/projects.json` lists.

Read-only (format: docs/sources/crush.md). The source root is Crush's data folder
(`${XDG_DATA_HOME:-~/.local/share}/crush`); its `projects.json` names the projects, and each
project keeps its own SQLite database *outside* that root. Only those databases are read, each
re-checked at every walk and read (`linked_files`): the project path absolute, the database
exactly `<project>/.crush/crush.db`, a regular file reached through no symbolic link. Nothing
else outside the root is opened (docs/reliability.md, "Links"). Each database is read through
`sqlite_snapshot.read_database` (nothing written, created or locked beside it), only when one of
its files changed; each session's change is its own `updated_at`.

* **Listed**: sessions without a `parent_session_id` (a sub-agent session, id
  `<messageID>$$<toolCallID>`, is hidden as Crush hides it; its text is never in the parent's).
* **Projected**: `text` parts of `user` and `assistant` messages, in message then part order;
  never `reasoning`, `tool_call`, `tool_result`, `finish` or other parts, nor other roles.
* **Title**: the session's `title`, unless the placeholder "Untitled Session": then the first
  prompt. **cwd**: the project's path. **Times**: `created_at`, `updated_at` (Unix seconds).
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
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
    json_value,
    no_session_files,
    split_by_version,
    xdg_data_folder,
)
from sessionref.sources.foreign import (
    ForeignSession,
    ForeignSourceError,
    ForeignSourceErrorCode,
    ForeignSummary,
)
from sessionref.sources.lines import read_small_text
from sessionref.sources.reader import DatabaseSessions, SessionFiles, WalkContext
from sessionref.sources.registry import registered
from sessionref.sources.scan import DatabaseOnlyScan, FileScan
from sessionref.sources.session_file import tool_title
from sessionref.sources.sqlite_snapshot import SHM_SUFFIX, WAL_SUFFIX, read_database, require_columns

__all__ = ["KIND", "READER", "CrushReader", "project_databases"]

KIND: Final = "crush"
INFO: Final = registered(KIND)
UNKNOWN: Final = "unknown"
PROJECTS_FILE: Final = "projects.json"
PROJECTS_MAX_BYTES: Final = 4 << 20
"""A `projects.json` larger than this is not read."""
DATA_DIR: Final = ".crush"
DATABASE_NAME: Final = "crush.db"
SCHEMA: Final[dict[str, tuple[str, ...]]] = {
    "sessions": ("id", "parent_session_id", "title", "created_at", "updated_at"),
    "messages": ("id", "session_id", "role", "parts", "model", "created_at"),
}
"""The tables and columns the reader needs (more columns are fine; fewer is a schema it does not know)."""


def default_root(env: Mapping[str, str] | None = None, home: Path | None = None) -> Path:
    """`$XDG_DATA_HOME/crush` when that variable is set, else `~/.local/share/crush`."""
    return xdg_data_folder("crush", env, home)


def _regular_file(path: str) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _project_database(project: Mapping[str, Any]) -> str | None:
    """The database of one `projects.json` entry, or None when it is not exactly `<path>/.crush/crush.db`,
    not a regular file, or reached through a symbolic link anywhere on its path."""
    path = project.get("path")
    if not isinstance(path, str) or "\x00" in path or not os.path.isabs(path):
        return None
    folder = os.path.normpath(path)
    data_dir = project.get("data_dir")
    expected = os.path.join(folder, DATA_DIR)
    if data_dir is not None and (
        not isinstance(data_dir, str) or os.path.normpath(os.path.join(folder, data_dir)) != expected
    ):
        return None  # a data folder elsewhere is not one this reader will open
    database = os.path.join(expected, DATABASE_NAME)
    if os.path.realpath(database) != database or not _regular_file(database):
        return None
    return database


def project_databases(root: Path) -> dict[str, str]:
    """The databases `projects.json` under `root` names that pass the checks, mapped to their project path."""
    text = read_small_text(root, root / PROJECTS_FILE, PROJECTS_MAX_BYTES)
    try:
        document = json.loads(text) if text is not None else None
    except (ValueError, RecursionError):
        document = None
    projects = document.get("projects") if isinstance(document, dict) else None
    found: dict[str, str] = {}
    for project in projects if isinstance(projects, list) else ():
        if isinstance(project, dict) and (database := _project_database(project)) is not None:
            found.setdefault(database, os.path.dirname(os.path.dirname(database)))
    return found


def _companions(database: str) -> tuple[str, ...]:
    """The database's `-wal` and `-shm` that exist as regular files (never a link)."""
    return tuple(
        f"{database}{suffix}" for suffix in (WAL_SUFFIX, SHM_SUFFIX) if _regular_file(f"{database}{suffix}")
    )


def visible_texts(parts: object) -> list[str]:
    """The `text` parts' texts of a message's `parts` (never reasoning, tool calls or results)."""
    texts: list[str] = []
    for part in parts if isinstance(parts, list) else ():
        if not isinstance(part, dict) or part.get("type") != "text":
            continue
        data = part.get("data")
        text = data.get("text") if isinstance(data, dict) else None
        if isinstance(text, str) and text.strip():
            texts.append(text)
    return texts


def _messages(connection: sqlite3.Connection, session_id: str) -> list[ChatMessage]:
    return [
        ChatMessage(
            message_id,
            role if isinstance(role, str) else "",
            count(created) * 1000,
            tuple(visible_texts(json_value(parts))),
            KIND,
            model if isinstance(model, str) and model else UNKNOWN,
        )
        for message_id, role, parts, model, created in connection.execute(
            "SELECT id, role, parts, model, created_at FROM messages"
            " WHERE session_id = ? ORDER BY created_at, rowid",
            (session_id,),
        )
        if isinstance(message_id, str)
    ]


def _summary(
    native_id: str,
    project: str,
    title: object,
    created: object,
    updated: object,
    path: Path,
    prompt: str | None,
) -> ForeignSummary:
    created_ms, updated_ms = count(created) * 1000, count(updated) * 1000
    return chat_summary(
        KIND,
        native_id,
        path,
        cwd=project,
        created_ms=created_ms,
        updated_ms=updated_ms,
        title=title,
        prompt=prompt,
    )


def _listed_database(root: Path, path: Path) -> tuple[str, frozenset[str]]:
    """The project of a database `projects.json` names now, and every database it names; refused otherwise."""
    databases = project_databases(root)
    project = databases.get(str(path))
    if project is None:
        raise ForeignSourceError(
            ForeignSourceErrorCode.OUTSIDE_ROOT,
            f"{str(path)!r} is not a project database projects.json lists",
        )
    return project, frozenset(databases)


class CrushDatabases:
    """The sessions of each project's `crush.db`, by their own `updated_at`."""

    def linked_files(self, root: Path) -> frozenset[str]:
        """Each listed project's database and its existing `-wal`/`-shm`, checked (see the module)."""
        return frozenset(
            path for database in project_databases(root) for path in (database, *_companions(database))
        )

    def sessions(self, root: Path, files: SessionFiles, known: Mapping[str, str]) -> DatabaseSessions:
        """Top-level sessions; only new or changed ones are read further (for a placeholder title)."""
        path = files.paths[0]
        project, linked = _listed_database(root, path)

        def query(connection: sqlite3.Connection) -> DatabaseSessions:
            require_columns(connection, SCHEMA)
            rows = connection.execute(
                "SELECT id, title, created_at, updated_at FROM sessions WHERE parent_session_id IS NULL"
            )

            def summarize(native_id: str, row: tuple[object, object, object]) -> ForeignSummary:
                title, created, updated = row
                prompt = None if tool_title(title) else first_prompt_title(_messages(connection, native_id))
                return _summary(native_id, project, title, created, updated, path, prompt)

            return split_by_version(
                (
                    (native_id, max(count(created), count(updated)) * 1000, (title, created, updated))
                    for native_id, title, created, updated in rows
                ),
                known,
                summarize,
            )

        return read_database(root, path, query, linked)


@dataclass(slots=True)
class CrushScan(DatabaseOnlyScan):
    """Never filled: Crush's only files are its databases, listed by `CrushDatabases`."""

    KIND: ClassVar[str] = "crush"


class CrushReader:
    """Crush as a `SourceReader`: the databases of the projects it lists."""

    info: Final = INFO
    scan_type: Final = CrushScan
    title_index: Final = None
    database: Final = CrushDatabases()

    def default_root(self, env: Mapping[str, str] | None = None, home: Path | None = None) -> Path:
        """`$XDG_DATA_HOME/crush`, else `~/.local/share/crush`."""
        return default_root(env, home)

    def walk(self, root: Path) -> Iterator[SessionFiles]:
        """Each listed project's database as one database group (reads `projects.json` only)."""
        for database in project_databases(root):
            yield SessionFiles(None, (Path(database), *map(Path, _companions(database))), database=True)

    def scan(self, root: Path, path: Path, previous: FileScan | None) -> CrushScan:
        """Crush has no per-session files: any other file is not one of its sessions."""
        raise no_session_files("Crush", path)

    def summarize(
        self, root: Path, native_id: str | None, scans: Sequence[FileScan], context: WalkContext
    ) -> ForeignSummary | None:
        """None: every Crush session comes from a database listing."""
        return None

    def read(self, root: Path, native_id: str, paths: Sequence[Path]) -> ForeignSession:
        """One session in full from its project's database (which `projects.json` must still list)."""
        path = paths[0]
        project, linked = _listed_database(root, path)

        def query(connection: sqlite3.Connection) -> ForeignSession:
            require_columns(connection, SCHEMA)
            row = connection.execute(
                "SELECT title, created_at, updated_at FROM sessions WHERE id = ?", (native_id,)
            ).fetchone()
            if row is None:
                raise gone(KIND, native_id)
            messages = _messages(connection, native_id)
            title, created, updated = row
            summary = _summary(
                native_id, project, title, created, updated, path, first_prompt_title(messages)
            )
            return chat_session(summary, messages)

        return read_database(root, path, query, linked)


READER: Final = CrushReader()
