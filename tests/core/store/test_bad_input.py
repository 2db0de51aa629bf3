"""Bad input on the store side gets a coded error or a skipped entry, never a traceback (issue 8)."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
import zstandard
from sessionref.contract.projection import project_session_conversation
from sessionref.service.references import SessionReferences
from sessionref.store import StoreError, logfile, open_store
from sessionref.store import index as index_module
from sessionref.store.index import INDEX_FILE_NAME
from sessionref.store.nesting import MAX_NESTING_DEPTH
from store_fixtures import mark_as_ours
from test_index import header, title_event, write_log


def user(text: str, seq: int | None = None) -> dict[str, Any]:
    content = [{"type": "text", "text": text}]
    data = {"source": {"kind": "user"}, "content": content, "role": "user", "id": "m"}
    event: dict[str, Any] = {"type": "user/message", "data": data, "surfaceOp": "append"}
    if seq is not None:
        event = {"type": "user/message", "seq": seq, "time": 10 + seq, "data": data, "surfaceOp": "append"}
    return event


def raw_log(root: Path, folder: str, lines: list[bytes]) -> Path:
    path = root / folder / "session.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


# -- entries that must not take the whole store down -------------------------------------------


async def test_a_lone_surrogate_in_a_header_id_or_cwd_does_not_take_the_store_down(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    raw_log(tmp_path, "--w--/bad-id", [b'{"type":"session","version":0,"id":"a\\ud800b","createdAt":1}'])
    cwd = b'{"type":"session","version":0,"id":"c1","createdAt":2,"cwd":"/x\\udc80"}'
    raw_log(tmp_path, "--w--/bad-cwd", [cwd])
    write_log(tmp_path, "--w--/good", header("good", created_at=3), [title_event(0, "Good", time=3)])
    with caplog.at_level(logging.WARNING, logger="sessionref.store"):
        store = open_store(tmp_path)
    records = {record.id: record for record in await store.list_sessions()}
    assert sorted(records) == ["c1", "good"]
    assert records["c1"].cwd is None
    assert "lone surrogate" in caplog.text and "not valid Unicode" in caplog.text
    store.close()
    assert sorted(record.id for record in await open_store(tmp_path, catch_up=False).list_sessions()) == [
        "c1",
        "good",
    ]


async def test_a_session_folder_whose_name_is_not_utf8_is_skipped_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = os.path.join(os.fsencode(tmp_path), b"--w--", b"caf\xe9")
    os.makedirs(folder)
    with open(os.path.join(folder, b"session.jsonl"), "wb") as file:
        file.write(json.dumps(header("latin1")).encode() + b"\n")
    write_log(tmp_path, "--w--/good", header("good"))
    with caplog.at_level(logging.WARNING, logger="sessionref.store"):
        store = open_store(tmp_path)
    assert [record.id for record in await store.list_sessions()] == ["good"]
    assert "not valid UTF-8" in caplog.text
    store.close()


# -- the discovery index ----------------------------------------------------------------------


def corrupt_page(path: Path, page: int) -> None:
    """Overwrite most of one page (0-based; negative counts from the end, where the rows are)."""
    with sqlite3.connect(path) as connection:
        page_size = connection.execute("PRAGMA page_size").fetchone()[0]
        pages = connection.execute("PRAGMA page_count").fetchone()[0]
    page = page % pages
    assert pages > page > 0, "the index is too small for this test"
    with open(path, "r+b") as file:
        file.seek(page * page_size + 8)
        file.write(b"\xa5\x5a" * (page_size // 4))


@pytest.mark.parametrize("page", [2, -2])
async def test_a_corrupt_page_inside_the_index_is_detected_and_rebuilt(tmp_path: Path, page: int) -> None:
    for number in range(120):
        session_id = f"s{number:03d}"
        write_log(tmp_path, f"--w--/{session_id}", header(session_id), [title_event(0, f"Title {number}")])
    open_store(tmp_path).close()
    index = tmp_path / INDEX_FILE_NAME
    corrupt_page(index, page)
    for catch_up in (False, True):
        store = open_store(tmp_path, catch_up=catch_up)
        assert store.state.index.rebuilt is (not catch_up)  # rebuilt once; the second open finds it sound
        assert store.title("s042") == "Title 42"
        assert len(await store.list_sessions()) == 120
        store.close()


async def test_a_malformed_index_found_later_is_rebuilt_while_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    store = open_store(tmp_path)
    store.create_session(cwd="/w", session_id="s1")
    damaged = sqlite3.DatabaseError("database disk image is malformed")
    real_transaction = index_module._Transaction.__enter__
    failures = iter([damaged])

    def failing_enter(self: Any) -> None:
        error = next(failures, None)
        if error is not None:
            raise error
        real_transaction(self)

    monkeypatch.setattr(index_module._Transaction, "__enter__", failing_enter)
    with caplog.at_level(logging.WARNING, logger="sessionref.store"):
        store.rename("s1", "after the damage")
    assert "rebuilding the discovery index" in caplog.text
    store.create_session(cwd="/w", session_id="s2")
    store.close()
    reopened = open_store(tmp_path, catch_up=False)
    assert not reopened.state.index.rebuilt
    assert reopened.title("s1") == "after the damage"
    assert sorted(record.id for record in await reopened.list_sessions()) == ["s1", "s2"]
    reopened.close()


# -- logs that are too large or too deep ------------------------------------------------------


def write_zstd_bomb(path: Path, expanded: int) -> None:
    """A small `.zstd` whose frames expand to `expanded` zero bytes (streamed: bounded memory here too)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    head = json.dumps(header("bomb")).encode() + b"\n"
    with open(path, "wb") as file, zstandard.ZstdCompressor(level=3).stream_writer(file) as writer:
        writer.write(head)
        chunk = b"\0" * (1 << 20)
        for _ in range(expanded // len(chunk)):
            writer.write(chunk)


async def test_a_33kb_zstd_that_expands_to_1gib_is_refused_with_bounded_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bomb = tmp_path / "--w--" / "bomb" / "session.jsonl.zstd"
    write_zstd_bomb(bomb, 1 << 30)
    assert bomb.stat().st_size < 64 * 1024
    monkeypatch.setattr(logfile, "MAX_DECOMPRESSED_LOG_BYTES", 8 << 20)
    tracemalloc.start()
    try:
        with pytest.raises(StoreError) as caught:
            logfile.read_log_bytes(bomb)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert caught.value.code == "STORE_LOG_TOO_LARGE"
    assert "8 MiB" in caught.value.message
    assert peak < 32 << 20
    store = open_store(tmp_path)  # discovery skips it with a warning instead of failing
    assert await store.list_sessions() == []
    store.close()


async def test_events_nested_1000_deep_get_a_coded_error_never_a_recursion_error(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store.create_session(cwd="/w", session_id="s1")
    deep: Any = "bottom"
    for _ in range(1000):
        deep = [deep]
    for nested in (deep, {"a": deep}):
        with pytest.raises(StoreError) as caught:
            store.append("s1", [{"type": "turn/start", "data": {"x": nested}}])
        assert caught.value.code == "STORE_INVALID_EVENT"
        assert str(MAX_NESTING_DEPTH) in caught.value.message
    cycle: dict[str, Any] = {}
    cycle["self"] = cycle
    with pytest.raises(StoreError) as caught:
        store.append("s1", [{"type": "turn/start", "data": cycle}])
    assert caught.value.code == "STORE_INVALID_EVENT"
    assert store.read_log("s1")[1] == []
    # Written by another program: the deep line is skipped and counted, the rest reads.
    log = next(tmp_path.glob("*/s1/session.jsonl"))
    with open(log, "ab") as file:
        file.write(b'{"type":"turn/start","seq":0,"time":1,"data":' + b"[" * 1000 + b"]" * 1000 + b"}\n")
    assert store.append("s1", [user("still fine")])[0]["seq"] == 1
    report = store.read_log_report("s1")
    assert report.skipped_lines == (2,)
    assert [event["seq"] for event in report.events] == [1]
    assert len((await store.read_surface("s1"))["events"]) == 1
    store.close()


async def test_a_header_nested_too_deep_is_not_a_session(tmp_path: Path) -> None:
    deep = b'{"type":"session","id":"deep","createdAt":1,"x":' + b"[" * 1000 + b"]" * 1000 + b"}"
    raw_log(tmp_path, "--w--/deep", [deep])
    store = open_store(tmp_path)
    assert await store.list_sessions() == []
    store.close()


# -- events the store accepts must read back -----------------------------------------------------


async def test_system_messages_are_accepted_and_show_and_prepare_still_work(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store.create_session(cwd="/w", session_id="source")
    store.create_session(cwd="/w", session_id="target")
    system = {"role": "system", "content": [{"type": "text", "text": "be brief"}]}
    system_event = {"type": "system/message", "data": system, "surfaceOp": "append"}
    store.append("source", [user("what is up"), system_event])
    surface = await store.read_surface("source")
    assert [event["type"] for event in surface["events"]] == ["user/message", "system/message"]
    assert [item.text for item in project_session_conversation(surface)] == ["what is up"]

    class Target:
        id = "target"
        cwd = "/w"

    prepared = await SessionReferences(store).prepare_text(Target(), "see @[source](dsh-session:InNvdXJjZSI)")
    assert prepared.references and prepared.references[0]["sessionId"] == "source"
    store.close()


async def test_a_tool_result_replace_with_data_that_is_not_an_object_costs_only_its_line(
    tmp_path: Path,
) -> None:
    result = {"type": "tool/result", "seq": 0, "time": 1, "data": {"message": {"source": {"callId": "c"}}}}
    replace = {
        "type": "tool/result",
        "seq": 1,
        "time": 2,
        "data": ["not", "an", "object"],
        "sourceEventSeqs": [0],
        "surfaceOp": {"op": "replace", "start": 0, "end": 0},
    }
    write_log(tmp_path, "--w--/tools", header("tools"), [{**result, "surfaceOp": "append"}, replace])
    store = open_store(tmp_path)
    report = await store.read_surface_report("tools")
    assert [event["seq"] for event in report.snapshot["events"]] == [0]
    assert report.skipped_lines == (3,)
    store.close()


# -- one unreadable line ------------------------------------------------------------------------


async def test_one_unreadable_line_in_the_middle_leaves_the_rest_readable_and_counted(tmp_path: Path) -> None:
    log = mark_as_ours(write_log(tmp_path, "--w--/s1", header("s1"), [user("first", 0), user("second", 1)]))
    with open(log, "ab") as file:
        file.write(b"\x00\x01 garbage from a crash \xff\n")
        file.write(json.dumps(user("third", 3)).encode() + b"\n")
    store = open_store(tmp_path)
    report = store.read_log_report("s1")
    assert report.skipped_lines == (4,)
    assert [event["seq"] for event in report.events] == [0, 1, 3]
    surface = store.read_log("s1")
    assert [event["seq"] for event in surface[1]] == [0, 1, 3]
    folded = await store.read_surface_report("s1")
    assert folded.skipped_lines == (4,)
    texts = [item.text for item in project_session_conversation(folded.snapshot)]
    assert texts == ["first", "second", "third"]
    store.close()


async def test_a_compaction_naming_a_skipped_event_still_folds(tmp_path: Path) -> None:
    checkpoint = {
        "type": "user/message",
        "seq": 3,
        "time": 13,
        "data": {
            "source": {"kind": "plugin", "plugin": "compact", "compactionId": "c"},
            "content": [{"type": "text", "text": "summary"}],
            "role": "user",
        },
        "sourceEventSeqs": [0, 1, 2],
        "surfaceOp": {"op": "replace", "start": 0, "end": 2},
    }
    log = write_log(tmp_path, "--w--/s1", header("s1"), [user("a", 0), user("b", 1)])
    with open(log, "ab") as file:
        file.write(b'{"type":"user/message","seq":2,"da\n')  # seq 2 was lost to a bad line
        file.write(json.dumps(checkpoint).encode() + b"\n" + json.dumps(user("after", 4)).encode() + b"\n")
    store = open_store(tmp_path)
    folded = await store.read_surface_report("s1")
    assert folded.skipped_lines == (4,)
    assert [event["seq"] for event in folded.snapshot["events"]] == [3, 4]
    store.close()


async def test_duplicate_seqs_left_by_two_old_writers_are_skipped_not_fatal(tmp_path: Path) -> None:
    lines = [user("a", 0), user("b", 1), user("b again", 1), user("c", 2)]
    write_log(tmp_path, "--w--/s1", header("s1"), lines)
    store = open_store(tmp_path)
    report = store.read_log_report("s1")
    assert report.skipped_lines == (4,)
    assert len((await store.read_surface("s1"))["events"]) == 3
    store.close()


def test_a_huge_id_is_quoted_as_a_bounded_excerpt(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    huge = "x" * 5_000_000
    with pytest.raises(StoreError) as caught:
        store.read_log(huge)
    assert caught.value.code == "STORE_SESSION_NOT_FOUND"
    assert len(caught.value.message) < 200 and "…" in caught.value.message
    with pytest.raises(StoreError) as caught:
        store.read_log("short")
    assert caught.value.message == 'session "short" not found'
    store.close()
