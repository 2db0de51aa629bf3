"""Hand-written SQLite fixtures, built from their SQL text into a test's own folder."""

from __future__ import annotations

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


DATABASE_ROOTS = {"opencode": opencode_root, "cursor": cursor_root}
"""The database-backed sources' fixture roots, built into a test's folder."""
