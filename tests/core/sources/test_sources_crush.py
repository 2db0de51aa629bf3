"""Crush: each listed project's `.crush/crush.db`, and never a path projects.json names otherwise."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from databases import crush_project, crush_root, write_projects
from histories import discover, projected, read_listed, tree_state
from sessionref.sources import ForeignSourceError, ForeignSourceErrorCode, parse_foreign_session_id
from sessionref.sources.crush import READER
from sessionref.sources.foreign import ForeignSummary
from sessionref.sources.reader import SessionFiles

UPLOAD = "crush:5e0c7a1e-0000-4000-8000-0000000c0001"
FLAGS = "crush:5e0c7a1e-0000-4000-8000-0000000c0002"


def listed(root: Path) -> dict[str, ForeignSummary]:
    return {summary.session_id: summary for summary in discover("crush", root)}


def test_top_level_sessions_are_listed_with_the_project_as_cwd(tmp_path: Path) -> None:
    sessions = listed(crush_root(tmp_path))
    assert set(sessions) == {UPLOAD, FLAGS}  # the sub-agent session `m2$$call_1` is hidden
    assert sessions[UPLOAD].title == "Retry the flaky upload"
    assert sessions[FLAGS].title is not None and sessions[FLAGS].title.startswith("List the config")
    assert sessions[UPLOAD].cwd == str(tmp_path / "projects" / "shop")
    assert (sessions[UPLOAD].created_at, sessions[UPLOAD].updated_at) == (1773500000000, 1773500009000)
    for session_id, summary in sessions.items():
        assert parse_foreign_session_id(session_id) == ("crush", summary.native_id)


def test_only_text_parts_of_user_and_assistant_messages_are_projected(tmp_path: Path) -> None:
    root = crush_root(tmp_path)
    session = read_listed(listed(root)[UPLOAD], root)
    assert projected(session) == [
        ("user", "Why does the upload fail on slow links?", False),
        ("assistant", "The timeout is fixed at 5 s; scale it with the size.", False),
    ]
    assert "must not leak" not in str(session.snapshot)


def test_reading_changes_nothing_in_the_data_folder_or_the_project(tmp_path: Path) -> None:
    root = crush_root(tmp_path)
    project = tmp_path / "projects" / "shop"
    before = (tree_state(root), tree_state(project))
    for summary in listed(root).values():
        read_listed(summary, root)
    assert (tree_state(root), tree_state(project)) == before


def test_an_unchanged_session_is_not_read_again(tmp_path: Path) -> None:
    root = crush_root(tmp_path)
    assert READER.database is not None
    (files,) = list(READER.walk(root))
    first = {s.native_id: s.version or "" for s in READER.database.sessions(root, files, {}).changed}
    again = READER.database.sessions(root, files, first)
    assert set(again.unchanged) == set(first) and again.changed == ()


def test_a_linked_or_misplaced_database_in_projects_json_is_refused(tmp_path: Path) -> None:
    real = crush_project(tmp_path / "real")
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    elsewhere = crush_project(tmp_path / "elsewhere")
    (tmp_path / "linked-db" / ".crush").mkdir(parents=True)
    (tmp_path / "linked-db" / ".crush" / "crush.db").symlink_to(elsewhere / ".crush" / "crush.db")
    other_dir = tmp_path / "other-dir"
    crush_project(other_dir)
    root = write_projects(
        tmp_path / "crush",
        {"path": str(tmp_path / "link")},  # the project folder is a link
        {"path": str(tmp_path / "linked-db")},  # the database is a link
        {"path": str(other_dir), "data_dir": "../elsewhere/.crush"},  # not `.crush` under the project
        {"path": "relative/project"},
        {"path": str(tmp_path / "missing")},
    )
    assert list(READER.walk(root)) == []
    assert READER.database is not None and READER.database.linked_files(root) == frozenset()
    with pytest.raises(ForeignSourceError) as refused:
        READER.database.sessions(
            root, SessionFiles(None, (elsewhere / ".crush" / "crush.db",), database=True), {}
        )
    assert refused.value.code is ForeignSourceErrorCode.OUTSIDE_ROOT  # a database no project lists


def test_a_project_dropped_from_projects_json_is_no_longer_read(tmp_path: Path) -> None:
    root = crush_root(tmp_path)
    summary = listed(root)[UPLOAD]
    write_projects(root)
    with pytest.raises(ForeignSourceError) as refused:
        read_listed(summary, root)
    assert refused.value.code is ForeignSourceErrorCode.OUTSIDE_ROOT


def test_a_database_of_another_schema_is_refused_with_a_code(tmp_path: Path) -> None:
    root = crush_root(tmp_path)
    database = tmp_path / "projects" / "shop" / ".crush" / "crush.db"
    with closing(sqlite3.connect(database)) as connection:
        connection.execute("ALTER TABLE messages RENAME COLUMN parts TO content")
        connection.commit()
    assert READER.database is not None
    (files,) = list(READER.walk(root))
    with pytest.raises(ForeignSourceError) as newer:
        READER.database.sessions(root, files, {})
    assert newer.value.code is ForeignSourceErrorCode.DATABASE_SCHEMA


def test_the_default_root_follows_xdg_data_home() -> None:
    assert READER.default_root({"XDG_DATA_HOME": "/data"}, Path("/h")) == Path("/data/crush")
    assert READER.default_root({}, Path("/h")) == Path("/h/.local/share/crush")
