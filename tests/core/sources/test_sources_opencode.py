"""OpenCode: the SQLite database (read without writing beside it) and the legacy JSON tree."""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from databases import opencode_root
from histories import FIXTURES, discover, projected, read_listed, tree_state
from sessionref.sources import ForeignSourceError, ForeignSourceErrorCode
from sessionref.sources.opencode import READER
from sessionref.sources.reader import SessionFiles

PAY = "opencode:ses_01JQAAAAAAAAAAAAAAAAAAAAA1"
LIMITS = "opencode:ses_01JQAAAAAAAAAAAAAAAAAAAAA2"
CHILD = "opencode:ses_01JQAAAAAAAAAAAAAAAAAAAAA3"


def listed(root: Path) -> dict[str, object]:
    assert READER.database is not None
    (files,) = list(READER.walk(root))
    found = READER.database.sessions(root, files, {})
    return {summary.session_id: summary for summary in found.changed}


def test_top_level_sessions_are_listed_and_child_sessions_hidden(tmp_path: Path) -> None:
    root = opencode_root(tmp_path)
    sessions = listed(root)
    assert set(sessions) == {PAY, LIMITS} and CHILD not in sessions
    assert sessions[PAY].title == "Flaky payment test"  # type: ignore[attr-defined]
    assert sessions[LIMITS].title == "Add rate limiting to the login route"  # type: ignore[attr-defined]  # placeholder title
    assert sessions[LIMITS].cwd == "/home/ana/api"  # type: ignore[attr-defined]


def test_only_visible_text_parts_are_projected(tmp_path: Path) -> None:
    root = opencode_root(tmp_path)
    session = read_listed(listed(root)[PAY], root)  # type: ignore[arg-type]
    assert projected(session) == [
        ("user", "Why does test_pay fail one run in ten?", False),
        ("assistant", "It reads the wall clock; freeze it in the fixture.", False),
    ]
    assert "must not leak" not in str(session.snapshot)


def test_an_unchanged_session_is_not_read_again(tmp_path: Path) -> None:
    root = opencode_root(tmp_path)
    assert READER.database is not None
    (files,) = list(READER.walk(root))
    first = {s.native_id: s.version for s in READER.database.sessions(root, files, {}).changed}
    again = READER.database.sessions(root, files, {key: value or "" for key, value in first.items()})
    assert set(again.unchanged) == set(first) and again.changed == ()


def test_reading_creates_changes_and_locks_nothing_in_the_folder(tmp_path: Path) -> None:
    root = opencode_root(tmp_path)
    before = tree_state(root)
    for summary in listed(root).values():
        read_listed(summary, root)  # type: ignore[arg-type]
    assert tree_state(root) == before  # no -wal/-shm created, no byte or mtime changed


def test_a_corrupt_or_newer_schema_database_is_refused_with_a_code(tmp_path: Path) -> None:
    root = opencode_root(tmp_path)
    database = root / "opencode.db"
    with closing(sqlite3.connect(database)) as connection:
        connection.execute("ALTER TABLE session RENAME COLUMN directory TO worktree")
        connection.commit()
    assert READER.database is not None
    files = SessionFiles(None, (database,), database=True)
    with pytest.raises(ForeignSourceError) as newer:
        READER.database.sessions(root, files, {})
    assert newer.value.code is ForeignSourceErrorCode.DATABASE_SCHEMA
    database.write_bytes(b"SQLite format 3\x00" + b"\xff" * 200)
    with pytest.raises(ForeignSourceError) as corrupt:
        READER.database.sessions(root, files, {})
    assert corrupt.value.code is ForeignSourceErrorCode.DATABASE_UNREADABLE


def test_a_missing_database_is_never_created(tmp_path: Path) -> None:
    assert READER.database is not None
    missing = tmp_path / "opencode.db"
    with pytest.raises(ForeignSourceError):
        READER.database.sessions(tmp_path, SessionFiles(None, (missing,), database=True), {})
    assert not missing.exists() and list(tmp_path.iterdir()) == []


def test_the_legacy_json_tree_is_read_when_there_is_no_database(tmp_path: Path) -> None:
    root = tmp_path / "opencode"
    shutil.copytree(FIXTURES / "opencode-legacy", root)
    (found,) = discover("opencode", root)
    assert (found.session_id, found.title, found.cwd) == (
        "opencode:ses_legacy1",
        "Draft the release post",
        "/home/ana/blog",
    )
    assert projected(read_listed(found, root)) == [
        ("user", "Outline a post for the 2.0 release", False),
        ("assistant", "Intro, three features, upgrade notes.", False),
    ]


def test_the_default_root_follows_xdg_data_home() -> None:
    assert READER.default_root({"XDG_DATA_HOME": "/data"}, Path("/h")) == Path("/data/opencode")
    assert READER.default_root({}, Path("/h")) == Path("/h/.local/share/opencode")
