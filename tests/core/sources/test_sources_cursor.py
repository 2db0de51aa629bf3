"""Cursor: the IDE's `state.vscdb` key-value rows, read without writing beside the database."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from databases import cursor_root
from histories import discover, projected, read_listed, tree_state
from sessionref.sources import ForeignSourceError, ForeignSourceErrorCode, parse_foreign_session_id
from sessionref.sources.cursor import READER
from sessionref.sources.foreign import ForeignSummary
from sessionref.sources.reader import SessionFiles

PRICES = "cursor:1b2c3d4e-0000-4000-8000-00000000c001"
RENAME = "cursor:1b2c3d4e-0000-4000-8000-00000000c002"


def listed(root: Path) -> dict[str, ForeignSummary]:
    return {summary.session_id: summary for summary in discover("cursor", root)}


def test_each_conversation_is_listed_with_its_name_or_first_prompt(tmp_path: Path) -> None:
    sessions = listed(cursor_root(tmp_path))
    assert set(sessions) == {PRICES, RENAME}
    assert sessions[PRICES].title == "Cache the price lookup"
    assert sessions[RENAME].title is not None and sessions[RENAME].title.startswith("Rename the billing")
    assert (sessions[PRICES].created_at, sessions[PRICES].updated_at) == (1773400000000, 1773400009000)
    assert sessions[PRICES].cwd is None


def test_ids_round_trip_through_session_uris(tmp_path: Path) -> None:
    for session_id, summary in listed(cursor_root(tmp_path)).items():
        assert parse_foreign_session_id(session_id) == ("cursor", summary.native_id)


def test_only_user_and_assistant_text_is_projected_in_write_order(tmp_path: Path) -> None:
    root = cursor_root(tmp_path)
    session = read_listed(listed(root)[PRICES], root)
    assert projected(session) == [
        ("user", "Why is the price page slow?", False),
        ("assistant", "Each request reads the catalog; cache it per minute.", False),
    ]
    assert "must not leak" not in str(session.snapshot)
    renamed = read_listed(listed(root)[RENAME], root)
    assert projected(renamed)[0] == ("user", "Rename the billing module to invoices", False)  # rawText
    assert "must not leak" not in str(renamed.snapshot)  # a key sharing only a prefix is another chat


def test_an_unchanged_conversation_is_not_read_again(tmp_path: Path) -> None:
    root = cursor_root(tmp_path)
    assert READER.database is not None
    (files,) = list(READER.walk(root))
    first = {s.native_id: s.version or "" for s in READER.database.sessions(root, files, {}).changed}
    again = READER.database.sessions(root, files, first)
    assert set(again.unchanged) == set(first) and again.changed == ()
    with closing(sqlite3.connect(files.paths[0])) as connection:
        connection.execute(
            "UPDATE cursorDiskKV SET value = json_set(value, '$.lastUpdatedAt', 1773400200000) WHERE key = ?",
            (f"composerData:{PRICES.partition(':')[2]}",),
        )
        connection.commit()
    (files,) = list(READER.walk(root))
    grown = READER.database.sessions(root, files, first)
    assert [summary.session_id for summary in grown.changed] == [PRICES]


def test_reading_creates_changes_and_locks_nothing_in_the_folder(tmp_path: Path) -> None:
    root = cursor_root(tmp_path)
    before = tree_state(root)
    for summary in listed(root).values():
        read_listed(summary, root)
    assert tree_state(root) == before


def test_a_database_without_the_key_value_table_is_refused_with_a_code(tmp_path: Path) -> None:
    root = cursor_root(tmp_path)
    database = root / "globalStorage" / "state.vscdb"
    with closing(sqlite3.connect(database)) as connection:
        connection.execute("ALTER TABLE cursorDiskKV RENAME TO diskKV")
        connection.commit()
    assert READER.database is not None
    with pytest.raises(ForeignSourceError) as newer:
        READER.database.sessions(root, SessionFiles(None, (database,), database=True), {})
    assert newer.value.code is ForeignSourceErrorCode.DATABASE_SCHEMA


def test_a_missing_or_linked_database_is_not_walked(tmp_path: Path) -> None:
    assert list(READER.walk(tmp_path / "User")) == []
    elsewhere = cursor_root(tmp_path / "elsewhere")
    root = tmp_path / "User"
    (root / "globalStorage").mkdir(parents=True)
    (root / "globalStorage" / "state.vscdb").symlink_to(elsewhere / "globalStorage" / "state.vscdb")
    assert list(READER.walk(root)) == []


def test_the_default_root_is_the_platforms_cursor_user_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.platform", "linux")
    assert READER.default_root({}, Path("/h")) == Path("/h/.config/Cursor/User")
    monkeypatch.setattr("sys.platform", "darwin")
    assert READER.default_root({}, Path("/h")) == Path("/h/Library/Application Support/Cursor/User")
