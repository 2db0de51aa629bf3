"""The one helper that opens the discovery and text indexes' cache files, and its slow-statement hook."""

from __future__ import annotations

import logging
import math
import sqlite3
from pathlib import Path

import pytest
from sessionref.service.conversation_rows import ConversationRow
from sessionref.service.protocols import ConversationRequest
from sessionref.store.cache_file import (
    CacheFileUnusable,
    SlowStatements,
    connect_cache,
    open_cache_file,
)
from sessionref.store.index import DiscoveryIndex
from sessionref.textsearch import SessionFacts, SessionRows, TextIndex

log = logging.getLogger("test.cache_file")


def no_problem(connection: sqlite3.Connection) -> str | None:
    return None if connection.execute("SELECT count(*) FROM t").fetchone() == (1,) else "it is empty"


def create(connection: sqlite3.Connection) -> None:
    connection.executescript("CREATE TABLE t (x); INSERT INTO t VALUES (1);")


def opened(path: Path) -> tuple[sqlite3.Connection, bool]:
    return open_cache_file(path, what="test cache", problem=no_problem, create=create, log=log)


def test_a_missing_file_is_created_and_a_usable_one_kept(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    connection, created = opened(path)
    connection.close()
    again, recreated = opened(path)
    assert (created, recreated) == (True, False)
    assert again.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    again.close()


def test_a_damaged_file_is_replaced_and_the_rebuild_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "cache.sqlite"
    path.write_bytes(b"not a database at all" * 100)
    connection, created = opened(path)
    assert created and connection.execute("SELECT x FROM t").fetchall() == [(1,)]
    assert "rebuilding the test cache" in caplog.text
    connection.close()


def test_a_symlinked_cache_file_is_replaced_never_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.sqlite"
    first, _ = opened(elsewhere)  # a usable cache file: following the link would use it
    first.close()
    before = elsewhere.read_bytes()
    path = tmp_path / "cache.sqlite"
    path.symlink_to(elsewhere)
    connection, created = opened(path)
    connection.close()
    assert created and not path.is_symlink()
    assert elsewhere.read_bytes() == before


def test_a_file_that_cannot_be_created_is_reported_unusable(tmp_path: Path) -> None:
    with pytest.raises(CacheFileUnusable) as caught:
        opened(tmp_path / "missing-folder" / "cache.sqlite")
    assert "cannot be created" in caught.value.reason and not caught.value.busy


def test_slow_statements_are_off_by_default(tmp_path: Path) -> None:
    connection = connect_cache(tmp_path / "cache.sqlite")
    assert type(connection) is sqlite3.Connection  # no timing wrapper at all
    connection.close()


def test_statements_at_or_over_the_threshold_are_reported_with_their_sql(tmp_path: Path) -> None:
    reported: list[tuple[str, float]] = []
    every = connect_cache(
        tmp_path / "a.sqlite", slow=SlowStatements(0.0, lambda sql, s: reported.append((sql, s)))
    )
    every.execute("CREATE TABLE t (x)")
    every.executemany("INSERT INTO t VALUES (?)", [(1,), (2,)])
    assert [sql for sql, _ in reported][-2:] == ["CREATE TABLE t (x)", "INSERT INTO t VALUES (?)"]
    assert all(seconds >= 0 for _, seconds in reported)
    every.close()
    none: list[str] = []
    never = connect_cache(
        tmp_path / "b.sqlite", slow=SlowStatements(math.inf, lambda sql, s: none.append(sql))
    )
    never.execute("CREATE TABLE t (x)")
    never.close()
    assert none == []


def test_both_indexes_hand_their_statements_to_the_hook(tmp_path: Path) -> None:
    seen: list[str] = []
    hook = SlowStatements(0.0, lambda sql, seconds: seen.append(sql))
    discovery = DiscoveryIndex(tmp_path / "index.sqlite", slow=hook)
    assert any("CREATE TABLE logs" in sql for sql in seen)
    discovery.close()
    seen.clear()
    text = TextIndex(tmp_path / "text.sqlite", slow=hook)
    text.update([SessionRows("s", [ConversationRow(0, "user", "pg_dump the replica", False, 1)], 0)])
    writes = len(seen)
    assert writes > 0
    text.search(ConversationRequest("replica"), facts=lambda ids: {i: SessionFacts(None, 1) for i in ids})
    assert len(seen) > writes  # the search connection is timed too
    text.close()
