"""Reading another agent's SQLite database while that agent writes it: consistent, nothing written there."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
from databases import opencode_root
from histories import tree_state
from sessionref.sources import ForeignSourceError, ForeignSourceErrorCode
from sessionref.sources.opencode import READER
from sessionref.sources.reader import SessionFiles
from sessionref.sources.sqlite_snapshot import database_files, read_database

WRITER = r"""
import sqlite3, sys
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("PRAGMA journal_mode=WAL")
connection.execute("PRAGMA wal_autocheckpoint=0")  # keep every commit in the WAL, as a busy agent does
for line in sys.stdin:
    command, _, argument = line.strip().partition(" ")
    if command == "add":
        connection.execute(
            "INSERT INTO session VALUES (?, 'prj_shop', NULL, 's', '/home/ana/shop', ?, '1', "
            "1773400000000, ?, NULL)",
            (f"ses_live_{argument}", f"Live session {argument}", 1773400000000 + int(argument)),
        )
    elif command == "hold":
        connection.execute("BEGIN IMMEDIATE")
        connection.execute(
            "INSERT INTO session VALUES ('ses_uncommitted', 'prj_shop', NULL, 's', '/x', 'Uncommitted', '1', "
            "1, 2, NULL)"
        )
    elif command == "release":
        connection.execute("COMMIT")
    print("done " + command, flush=True)
"""


class Writer:
    """Another process writing the database; each command returns once the writer has done it."""

    def __init__(self, database: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(database)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def do(self, command: str) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        assert self.process.stdout.readline().strip() == f"done {command.partition(' ')[0]}"

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


@pytest.fixture
def writer_and_root(tmp_path: Path) -> Iterator[tuple[Writer, Path]]:
    root = opencode_root(tmp_path)
    writer = Writer(root / "opencode.db")
    try:
        yield writer, root
    finally:
        writer.close()


def titles(root: Path) -> set[str]:
    assert READER.database is not None
    files = SessionFiles(None, database_files(root / "opencode.db"), database=True)
    return {summary.title or "" for summary in READER.database.sessions(root, files, {}).changed}


def test_every_committed_session_is_read_while_the_other_process_writes(
    writer_and_root: tuple[Writer, Path],
) -> None:
    writer, root = writer_and_root
    for number in range(1, 6):
        writer.do(f"add {number}")
        assert os.path.getsize(root / "opencode.db-wal") > 0  # the commits are still only in the WAL
        assert f"Live session {number}" in titles(root)


def test_an_uncommitted_transaction_is_not_seen_and_does_not_block(
    writer_and_root: tuple[Writer, Path],
) -> None:
    writer, root = writer_and_root
    writer.do("add 1")
    writer.do("hold")
    found = titles(root)
    assert "Live session 1" in found and "Uncommitted" not in found
    writer.do("release")
    assert "Uncommitted" in titles(root)


def test_reading_a_live_database_changes_none_of_its_files(writer_and_root: tuple[Writer, Path]) -> None:
    writer, root = writer_and_root
    writer.do("add 1")
    before = tree_state(root)
    assert {path.name for path in root.iterdir()} == {"opencode.db", "opencode.db-wal", "opencode.db-shm"}
    titles(root)
    assert tree_state(root) == before  # the live -wal and -shm included: nothing read marks them


def test_a_database_that_changes_during_the_read_is_read_again(tmp_path: Path) -> None:
    root = opencode_root(tmp_path)
    database = root / "opencode.db"
    attempts: list[int] = []

    def query(connection: sqlite3.Connection) -> int:
        attempts.append(1)
        if len(attempts) == 1:  # another program writes the file under the first read
            with closing(sqlite3.connect(database)) as other:
                other.execute("UPDATE session SET title = 'Renamed' WHERE parent_id IS NULL")
                other.commit()
        return int(connection.execute("SELECT count(*) FROM session").fetchone()[0])

    assert read_database(root, database, query) == 3 and len(attempts) == 2


def test_a_database_that_never_settles_is_refused_as_busy(tmp_path: Path) -> None:
    root = opencode_root(tmp_path)
    database = root / "opencode.db"

    def query(connection: sqlite3.Connection) -> None:
        with closing(sqlite3.connect(database)) as other:
            other.execute("UPDATE session SET time_updated = time_updated + 1")
            other.commit()

    with pytest.raises(ForeignSourceError) as busy:
        read_database(root, database, query)
    assert busy.value.code is ForeignSourceErrorCode.DATABASE_BUSY


def test_a_link_out_of_the_source_folder_is_not_followed(tmp_path: Path) -> None:
    elsewhere = opencode_root(tmp_path / "elsewhere")
    root = tmp_path / "root"
    root.mkdir()
    (root / "opencode.db").symlink_to(elsewhere / "opencode.db")
    with pytest.raises(ForeignSourceError) as outside:
        read_database(root, root / "opencode.db", lambda connection: None)
    assert outside.value.code is ForeignSourceErrorCode.OUTSIDE_ROOT
