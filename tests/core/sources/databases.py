"""Hand-written SQLite fixtures, built from their SQL text into a test's own folder."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

from histories import FIXTURES


def build_database(sql: Path, target: Path) -> Path:
    """`target` created from the statements in `sql` (closed cleanly: no `-wal`/`-shm` left)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(target)) as connection:
        connection.executescript(sql.read_text(encoding="utf-8"))
        connection.commit()
    return target


def opencode_root(folder: Path) -> Path:
    """An OpenCode data folder holding the fixture database."""
    root = folder / "opencode"
    build_database(FIXTURES / "opencode" / "opencode.sql", root / "opencode.db")
    return root


def cursor_root(folder: Path) -> Path:
    """A Cursor user folder holding the fixture `globalStorage/state.vscdb`."""
    root = folder / "User"
    build_database(FIXTURES / "cursor" / "state.sql", root / "globalStorage" / "state.vscdb")
    return root


def crush_project(folder: Path) -> Path:
    """A project folder holding the fixture Crush database at `.crush/crush.db`."""
    build_database(FIXTURES / "crush" / "crush.sql", folder / ".crush" / "crush.db")
    return folder


def write_projects(root: Path, *entries: dict[str, object]) -> Path:
    """Crush's data folder `root` with a `projects.json` listing `entries`."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "projects.json").write_text(json.dumps({"projects": list(entries)}), encoding="utf-8")
    return root


def crush_root(folder: Path) -> Path:
    """A Crush data folder whose `projects.json` lists one project holding the fixture database."""
    project = crush_project(folder / "projects" / "shop")
    entry = {"path": str(project), "data_dir": ".crush", "last_accessed": "2026-03-14T10:00:00Z"}
    return write_projects(folder / "share" / "crush", entry)


DATABASE_ROOTS = {"opencode": opencode_root, "cursor": cursor_root, "crush": crush_root}
"""The database-backed sources' fixture roots, built into a test's folder."""
