"""The store in company (issue 8): other processes write the folders we read; reads never write.

Each test is named after a reproduction in the issue.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from sessionref.store import StoreError, open_store
from sessionref.store.index import INDEX_FILE_NAME, STRICT_TABLES
from sessionref.store.locking import LOCK_FILE_NAME
from store_fixtures import mark_as_ours
from test_index import header, title_event, write_log

CLI = "from sessionref_tui.cli import main; raise SystemExit(main())"


def sessionref(*arguments: str) -> subprocess.CompletedProcess[str]:
    """Run the `sessionref` command line in another process."""
    return subprocess.run(
        [sys.executable, "-c", CLI, *arguments], capture_output=True, text=True, timeout=60, check=False
    )


def event(seq: int, text: str = "x") -> dict[str, Any]:
    return {"type": "turn/start", "seq": seq, "time": 1000 + seq, "data": {"turn": seq, "note": text}}


def files_below(root: Path) -> dict[str, bytes]:
    """Every file under `root` but our index, with its bytes."""
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and not path.is_symlink() and not path.name.startswith(INDEX_FILE_NAME)
    }


def test_a_half_written_line_survives_the_lister_and_show_works_once_it_is_finished(tmp_path: Path) -> None:
    root = tmp_path / "dsh"
    log = write_log(root, "--w--/dsh-1", header("dsh-1"), [event(0)])
    line = (json.dumps(event(1, "y" * 200)) + "\n").encode()
    fd = os.open(log, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, line[:40])  # DSH is in the middle of writing this event
        listed = sessionref("sessions", "--store", str(root), "--json")
        assert listed.returncode == 0, listed.stderr
        assert "dsh-1" in listed.stdout
        store = open_store(root)  # and the same in this process: open, list, refresh, read
        store.refresh()
        assert [e["seq"] for e in store.read_log("dsh-1")[1]] == [0]  # the half line is not there yet
        store.close()
        assert not log.with_name("session.jsonl.torn").exists()
        os.write(fd, line[40:])
    finally:
        os.close(fd)
    shown = sessionref("show", "dsh-1", "--store", str(root), "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["capturedThroughSeq"] == 1
    assert log.read_bytes().endswith(line)


def test_a_file_that_is_not_a_session_log_stays_byte_identical(tmp_path: Path) -> None:
    notes = tmp_path / "--w--" / "notes" / "session.jsonl"
    notes.parent.mkdir(parents=True)
    notes.write_bytes(b"buy milk\ncall bob")
    write_log(tmp_path, "--w--/real", header("real"))
    before = files_below(tmp_path)
    store = open_store(tmp_path)
    store.refresh()
    assert [record.id for record in (await_list(store))] == ["real"]
    store.close()
    store = open_store(tmp_path, catch_up=False, write_foreign=True)
    store.refresh()
    store.close()
    assert files_below(tmp_path) == before


def await_list(store: Any) -> list[Any]:
    import asyncio

    return list(asyncio.run(store.list_sessions()))


def test_a_log_symlinked_outside_the_root_is_neither_read_nor_touched(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    outside = tmp_path / "outside.jsonl"
    outside.write_bytes(json.dumps(header("victim")).encode() + b"\n" + b'{"type":"turn/st')
    root = tmp_path / "root"
    folder = root / "--w--" / "victim"
    folder.mkdir(parents=True)
    (folder / "session.jsonl").symlink_to(outside)
    mark_as_ours(folder / "session.jsonl")
    before = outside.read_bytes()
    with caplog.at_level(logging.WARNING, logger="sessionref.store"):
        store = open_store(root, write_foreign=True)
        store.refresh()
    assert await_list(store) == []
    assert "symbolic link" in caplog.text
    with pytest.raises(StoreError) as caught:
        store.append("victim", [{"type": "turn/end", "data": {}}])
    assert caught.value.code == "STORE_SESSION_NOT_FOUND"
    store.close()
    assert outside.read_bytes() == before
    assert not (tmp_path / "outside.jsonl.torn").exists()


def test_symlinked_folders_below_the_root_are_not_followed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    elsewhere = tmp_path / "elsewhere"
    write_log(elsewhere, "--x--/far", header("far"))
    root = tmp_path / "root"
    write_log(root, "--w--/near", header("near"))
    (root / "--linked-project--").symlink_to(elsewhere / "--x--")
    (root / "--w--" / "linked-session").symlink_to(elsewhere / "--x--" / "far")
    # A link that stays inside the root is not followed either: it would only list a session twice.
    (root / "--w--" / "alias").symlink_to(root / "--w--" / "near")
    with caplog.at_level(logging.WARNING, logger="sessionref.store"):
        store = open_store(root)
    assert [record.id for record in await_list(store)] == ["near"]
    assert caplog.text.count("not following the symbolic link") == 3
    store.close()


def test_a_planted_index_row_reads_and_appends_nothing_outside_the_root(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    target = mark_as_ours(write_log(outside, "--x--/evil", header("evil"), [event(0)]))
    root = tmp_path / "root"
    write_log(root, "--w--/real", header("real"), [title_event(0, "Real")])
    (root / "--link--").symlink_to(outside / "--x--")
    open_store(root).close()
    rows = [
        ("../outside/--x--/evil/session.jsonl", "escape"),
        (str(target), "absolute"),
        ("--link--/evil/session.jsonl", "evil"),  # the right shape, through a link
    ]
    with sqlite3.connect(root / INDEX_FILE_NAME) as connection:
        for path, session_id in rows:
            connection.execute(
                "INSERT INTO logs VALUES (?, ?, NULL, 1, ?, NULL, NULL, 0, 0, 0, NULL, NULL, 0, NULL)",
                (path, session_id, json.dumps(header(session_id))),
            )
    before = files_below(outside)
    store = open_store(root, catch_up=False, write_foreign=True)
    listed = [record.id for record in await_list(store)]
    assert "escape" not in listed and "absolute" not in listed
    for session_id in ("escape", "absolute", "evil"):
        for action in (store.read_log, store.read_log_report, store.delete_session):
            with pytest.raises(StoreError) as caught:
                action(session_id)
            assert caught.value.code in ("STORE_SESSION_NOT_FOUND", "STORE_UNSAFE_PATH"), session_id
        with pytest.raises(StoreError) as caught:
            store.append(session_id, [{"type": "turn/end", "data": {}}])
        assert caught.value.code in ("STORE_SESSION_NOT_FOUND", "STORE_UNSAFE_PATH"), session_id
    with pytest.raises(StoreError) as caught:
        store.read_log("evil")
    assert caught.value.code == "STORE_UNSAFE_PATH"
    assert not store.is_writable("evil")
    store.refresh()
    assert [record.id for record in await_list(store)] == ["real"]
    store.close()
    assert files_below(outside) == before


def test_an_index_row_that_is_not_utf8_makes_the_index_rebuild_not_fail(tmp_path: Path) -> None:
    write_log(tmp_path, "--w--/real", header("real"), [title_event(0, "Real")])
    open_store(tmp_path).close()
    with sqlite3.connect(tmp_path / INDEX_FILE_NAME) as connection:
        connection.execute(
            "INSERT INTO logs VALUES (CAST(x'2d2d772d2d2fff2f73657373696f6e2e6a736f6e6c' AS TEXT), 'bytes',"
            " NULL, 1, NULL, NULL, NULL, 0, 0, 0, NULL, NULL, 0, NULL)"
        )
    store = open_store(tmp_path, catch_up=False)
    assert store.state.index.rebuilt
    assert [record.id for record in await_list(store)] == ["real"]
    store.close()


def test_index_rows_of_the_wrong_types_make_the_index_rebuild(tmp_path: Path) -> None:
    write_log(tmp_path, "--w--/real", header("real"), [title_event(0, "Real")])
    open_store(tmp_path).close()
    index = tmp_path / INDEX_FILE_NAME
    # The table refuses such a row, so plant it the hard way: drop STRICT from the schema, insert,
    # then put the schema text back as it was.
    with sqlite3.connect(index) as connection:
        (schema,) = connection.execute("SELECT sql FROM sqlite_master WHERE name = 'logs'").fetchone()
        loose = schema.replace(" STRICT", "")
        connection.execute("PRAGMA writable_schema = ON")
        connection.execute("UPDATE sqlite_master SET sql = ? WHERE name = 'logs'", (loose,))
    with sqlite3.connect(index) as connection:
        connection.execute(
            "INSERT INTO logs VALUES ('--w--/typed/session.jsonl', 'typed', NULL, 'soon', NULL, NULL, NULL,"
            " 0, 0, 0, NULL, NULL, 0, NULL)"
        )
        connection.execute("PRAGMA writable_schema = ON")
        connection.execute("UPDATE sqlite_master SET sql = ? WHERE name = 'logs'", (schema,))
    store = open_store(tmp_path, catch_up=False)
    # quick_check finds the row against the STRICT table; without STRICT tables the load skips it.
    assert store.state.index.rebuilt is STRICT_TABLES
    assert [record.id for record in await_list(store)] == ["real"]
    store.close()


def test_a_writers_lock_never_blocks_a_reader(tmp_path: Path) -> None:
    import fcntl

    store = open_store(tmp_path)
    store.create_session(cwd="/w", session_id="s1")
    store.append("s1", [{"type": "turn/start", "data": {}}])
    lock = tmp_path / "--w--" / "s1" / LOCK_FILE_NAME
    with open(lock, "rb+") as held:  # another sessionref process, in the middle of an append
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        assert [e["seq"] for e in store.read_log("s1")[1]] == [0]
        assert [record.id for record in await_list(store)] == ["s1"]
        store.refresh()
        other = open_store(tmp_path)
        assert other.read_log_report("s1").skipped_lines == ()
        other.close()
    store.close()


def test_a_lock_held_too_long_gives_a_coded_error_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fcntl

    from sessionref.store import locking

    monkeypatch.setattr(locking, "LOCK_TIMEOUT_SECONDS", 0.05)
    store = open_store(tmp_path)
    store.create_session(cwd="/w", session_id="s1")
    log = tmp_path / "--w--" / "s1" / "session.jsonl"
    before = log.read_bytes()
    with open(log.with_name(LOCK_FILE_NAME), "rb+") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        with pytest.raises(StoreError) as caught:
            store.append("s1", [{"type": "turn/start", "data": {}}])
    assert caught.value.code == "STORE_LOCK_TIMEOUT"
    assert log.read_bytes() == before
    assert store.append("s1", [{"type": "turn/start", "data": {}}])[0]["seq"] == 0
    store.close()


def test_two_stores_in_one_process_take_turns(tmp_path: Path) -> None:
    first = open_store(tmp_path)
    first.create_session(cwd="/w", session_id="s1")
    second = open_store(tmp_path)
    failures: list[BaseException] = []

    def append_many(store: Any, tag: str) -> None:
        try:
            for n in range(40):
                store.append("s1", [{"type": "turn/start", "data": {"tag": f"{tag}{n}"}}])
        except BaseException as error:  # reported by the assertion below
            failures.append(error)

    threads = [threading.Thread(target=append_many, args=(s, t)) for s, t in ((first, "a"), (second, "b"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert failures == []
    events = first.read_log_report("s1")
    assert [e["seq"] for e in events.events] == list(range(80)) and events.skipped_lines == ()
    first.close()
    second.close()
