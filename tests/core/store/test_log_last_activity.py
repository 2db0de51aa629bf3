"""Sessions are ranked by last activity: the time of their newest event (issue 9 item 10)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sessionref.service.candidates import find_candidates
from sessionref.store import open_store
from sessionref.store.index import INDEX_FILE_NAME
from test_index import header, title_event, write_log


async def test_the_newest_event_not_the_creation_time_orders_sessions(tmp_path: Path) -> None:
    busy = [title_event(0, "A", 900)]
    write_log(tmp_path, "--w--/old-but-busy", header("old-but-busy", created_at=10), busy)
    write_log(tmp_path, "--w--/new-but-idle", header("new-but-idle", created_at=500))
    chunks = {"texts": ["a", "b", "c"], "dt": [5, 7]}
    packed = {"type": "text-chunks", "seq0": 0, "time0": 600, "data": chunks}
    write_log(tmp_path, "--w--/chunks", header("chunks", created_at=1), [packed])
    store = open_store(tmp_path)
    records = await store.list_sessions()
    assert [(record.id, record.last_activity) for record in records] == [
        ("old-but-busy", 900),
        ("chunks", 612),
        ("new-but-idle", 500),
    ]
    assert store.record("new-but-idle").updated_at == 500  # no events: its createdAt
    found = await find_candidates(store, agent_id="x", agent_cwd="/w", text="", limit=10)
    assert [(c.session_id, c.last_activity) for c in found] == [
        ("old-but-busy", 900),
        ("chunks", 612),
        ("new-but-idle", 500),
    ]
    store.close()


async def test_an_append_moves_a_session_to_the_front_and_a_reopen_agrees(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    for number, created in enumerate((300, 200, 100)):
        store.create_session(cwd="/w", session_id=f"s{number}", created_at=created)
    assert [record.id for record in await store.list_sessions()] == ["s0", "s1", "s2"]
    found = await store.search_candidates(exclude_id="", target_cwd="/w", needle="s", limit=5)
    assert [record.id for record, _ in found] == ["s0", "s1", "s2"]
    written = store.append("s2", [{"type": "turn/start", "data": {}}], time_ms=1_000)
    assert written[0]["time"] == 1_000
    assert [record.id for record in await store.list_sessions()] == ["s2", "s0", "s1"]
    found = await store.search_candidates(exclude_id="", target_cwd="/w", needle="s", limit=5)
    assert [(r.id, r.updated_at) for r, _ in found] == [("s2", 1_000), ("s0", 300), ("s1", 200)]
    store.rename("s1", "renamed", time_ms=2_000)
    assert [record.id for record in await store.list_sessions()] == ["s1", "s2", "s0"]
    store.close()
    reopened = open_store(tmp_path, catch_up=False)
    assert [(r.id, r.updated_at) for r in await reopened.list_sessions()] == [
        ("s1", 2_000),
        ("s2", 1_000),
        ("s0", 300),
    ]
    reopened.close()


async def test_an_index_of_the_previous_schema_is_rebuilt_with_last_activity(tmp_path: Path) -> None:
    write_log(tmp_path, "--w--/a", header("a", created_at=5), [title_event(0, "A", 50)])
    write_log(tmp_path, "--w--/b", header("b", created_at=40))
    index = tmp_path / INDEX_FILE_NAME
    with sqlite3.connect(index) as connection:  # what sessionref 0.1.0 left behind
        connection.executescript(
            """
            CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            INSERT INTO meta VALUES ('schema_version', '1');
            CREATE TABLE logs (path TEXT PRIMARY KEY, session_id TEXT, cwd TEXT, created_at INTEGER NOT NULL,
                header_json TEXT, title TEXT, fallback TEXT, offset INTEGER NOT NULL, size INTEGER NOT NULL,
                mtime_ns INTEGER NOT NULL, last_seq INTEGER, problem TEXT, torn INTEGER NOT NULL);
            """
        )
    store = open_store(tmp_path, catch_up=False)
    assert store.state.index.rebuilt and store.caught_up
    assert [(r.id, r.updated_at) for r in await store.list_sessions()] == [("a", 50), ("b", 40)]
    store.close()
