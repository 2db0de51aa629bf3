"""Opening from the index without walking the logs (`catch_up=False`), then `refresh()` in the background."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from sessionref.store import StoreError, open_store
from sessionref.store import catalog as catalog_module
from store_fixtures import mark_as_ours
from test_index import header, title_event, write_log

GUARD = 10.0
"""Seconds a synchronisation wait may take before the test fails instead of hanging."""


def grow(path: Path, *events: dict[str, Any]) -> None:
    with open(path, "a") as file:
        for event in events:
            file.write(json.dumps(event) + "\n")


async def test_reopen_serves_the_index_and_refresh_catches_up(tmp_path: Path) -> None:
    grown = write_log(tmp_path, "--w--/s1", header("s1", created_at=1), [title_event(0, "old")])
    removed = write_log(tmp_path, "--w--/s2", header("s2", created_at=2))
    open_store(tmp_path).close()
    grow(grown, title_event(1, "new"))
    removed.unlink()
    write_log(tmp_path, "--w--/s3", header("s3", created_at=3), [title_event(0, "appeared")])

    # The logs were written by "another program": writing them needs the opt-in.
    store = open_store(tmp_path, catch_up=False, write_foreign=True)
    assert not store.caught_up
    # Discovery lags until the refresh: the index as it was when the store was closed.
    assert [record.id for record in await store.list_sessions()] == ["s2", "s1"]
    assert store.title("s1") == "old"
    # What matters for correctness is never stale: reads and writes go to the log itself.
    surface = await store.read_surface("s1")
    assert [event["seq"] for event in surface["events"]] == []
    assert [event["seq"] for event in store.read_log("s1")[1]] == [0, 1]
    written = store.append("s1", [{"type": "turn/start", "data": {}}])
    assert written[0]["seq"] == 2

    store.refresh()
    assert store.caught_up
    # Most recent activity first: s1 was just appended to, s3's last event is at time 1.
    assert [record.id for record in await store.list_sessions()] == ["s1", "s3"]
    assert await store.read_titles(["s1", "s2", "s3"]) == {"s1": "new", "s2": None, "s3": "appeared"}
    found = await store.search_candidates(exclude_id="x", target_cwd="/w", needle="appea", limit=5)
    assert [record.id for record, _ in found] == ["s3"]
    with pytest.raises(StoreError) as caught:
        store.title("s2")
    assert caught.value.code == "STORE_SESSION_NOT_FOUND"
    store.close()


async def test_a_store_without_an_index_is_indexed_at_open_even_when_deferring(tmp_path: Path) -> None:
    for number in range(3):
        write_log(tmp_path, f"--w--/s{number}", header(f"s{number}", created_at=number))
    calls: list[tuple[int, int]] = []
    store = open_store(tmp_path, catch_up=False, progress=lambda done, total: calls.append((done, total)))
    assert store.caught_up
    assert calls == [(3, 3)]
    assert [record.id for record in await store.list_sessions()] == ["s2", "s1", "s0"]
    store.close()


async def test_default_open_is_caught_up(tmp_path: Path) -> None:
    path = write_log(tmp_path, "--w--/s1", header("s1"), [title_event(0, "old")])
    open_store(tmp_path).close()
    grow(path, title_event(1, "new"))
    store = open_store(tmp_path)
    assert store.caught_up and store.title("s1") == "new"
    store.close()


async def test_refresh_reports_new_logs_and_leaves_an_incomplete_line_alone(tmp_path: Path) -> None:
    write_log(tmp_path, "--w--/s1", header("s1"))
    open_store(tmp_path).close()
    start = {"type": "turn/start", "seq": 0, "time": 1, "data": {}}
    torn = mark_as_ours(write_log(tmp_path, "--w--/s2", header("s2"), [start]))
    with open(torn, "ab") as file:
        file.write(b'{"type":"turn/e')
    before = torn.read_bytes()
    store = open_store(tmp_path, catch_up=False)
    calls: list[tuple[int, int]] = []
    store.refresh(progress=lambda done, total: calls.append((done, total)))
    assert calls == [(1, 1)]
    # A reader never writes: the line may still be being written.
    assert torn.read_bytes() == before
    assert not (torn.parent / "session.jsonl.torn").exists()
    # Our own writer, under the session lock, knows nobody else is writing: it moves the fragment aside.
    assert store.append("s2", [{"type": "turn/end", "data": {}}])[0]["seq"] == 1
    assert (torn.parent / "session.jsonl.torn").read_bytes() == b'{"type":"turn/e\n'
    store.close()


async def test_the_walk_does_not_hold_the_store_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = mark_as_ours(write_log(tmp_path, "--w--/a", header("a", created_at=1), [title_event(0, "A")]))
    write_log(tmp_path, "--w--/b", header("b", created_at=2), [title_event(0, "B", time=2)])
    store = open_store(tmp_path, catch_up=False)
    walking, proceed = threading.Event(), threading.Event()
    real_scan = catalog_module.scan_log

    def paused_scan(root: Any, relative: str, previous: Any) -> Any:
        if not walking.is_set():
            walking.set()
            assert proceed.wait(GUARD), "the test never let the walk go on"
        return real_scan(root, relative, previous)

    monkeypatch.setattr(catalog_module, "scan_log", paused_scan)
    failures: list[BaseException] = []

    def refresh() -> None:
        try:
            store.refresh()
        except BaseException as error:  # reported by the assertion below
            failures.append(error)

    worker = threading.Thread(target=refresh)
    worker.start()
    try:
        assert walking.wait(GUARD)
        # The walk is parked in the middle: the store still answers and still writes.
        assert store.title("b") == "B"
        assert [record.id for record in await store.list_sessions()] == ["b", "a"]
        store.rename("a", "renamed meanwhile")
        assert store.title("a") == "renamed meanwhile"
    finally:
        proceed.set()
        worker.join(GUARD)
    assert not worker.is_alive() and failures == []
    # The walk's view of "a" is not newer than the rename; the rename is kept.
    assert store.title("a") == "renamed meanwhile"
    assert store.append("a", [{"type": "turn/start", "data": {}}])[0]["seq"] == 2
    assert path.read_text().count("\n") == 4
    store.close()
