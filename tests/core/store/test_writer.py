"""The write protocol: whole lines only, the next seq from the real tail, repairs only of our own logs."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from sessionref.store import StoreError, open_store
from sessionref.store import writer as writer_module
from sessionref.store.locking import LOCK_FILE_NAME
from sessionref.store.writer import TAIL_WINDOW, last_event_seq
from test_index import header, write_log


def test_a_failed_write_is_cut_back_out_so_the_log_keeps_whole_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = open_store(tmp_path)
    store.create_session(cwd="/w", session_id="s1")
    store.append("s1", [{"type": "turn/start", "data": {}}])
    log = tmp_path / "--w--" / "s1" / "session.jsonl"
    before = log.read_bytes()
    real_write = os.write

    def half_then_full_disk(fd: int, data: Any) -> int:
        if len(data) > 1000:  # our big event: half of it lands, then the disk is full
            real_write(fd, bytes(data[: len(data) // 2]))
            raise OSError(28, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(writer_module.os, "write", half_then_full_disk)
    with pytest.raises(StoreError) as caught:
        store.append("s1", [{"type": "turn/end", "data": {"pad": "x" * 5000}}])
    monkeypatch.undo()
    assert caught.value.code == "STORE_WRITE_FAILED"  # a failed write is not an unreadable store
    assert "No space left" in caught.value.message
    assert log.read_bytes() == before
    assert store.append("s1", [{"type": "turn/end", "data": {}}])[0]["seq"] == 1
    store.close()


def test_the_next_seq_comes_from_the_log_not_from_what_this_process_saw(tmp_path: Path) -> None:
    first = open_store(tmp_path)
    first.create_session(cwd="/w", session_id="s1")
    second = open_store(tmp_path)  # sees the session with no events
    assert first.append("s1", [{"type": "turn/start", "data": {}}] * 3)[-1]["seq"] == 2
    assert second.append("s1", [{"type": "turn/end", "data": {}}])[0]["seq"] == 3
    assert [event["seq"] for event in first.read_log("s1")[1]] == [0, 1, 2, 3]
    first.close()
    second.close()


def test_a_log_replaced_by_another_sessions_log_is_not_written(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store.create_session(cwd="/w", session_id="s1")
    log = tmp_path / "--w--" / "s1" / "session.jsonl"
    log.write_text(json.dumps(header("someone-else")) + "\n")
    with pytest.raises(StoreError) as caught:
        store.append("s1", [{"type": "turn/start", "data": {}}])
    assert caught.value.code == "STORE_INVALID_LOG"
    assert log.read_text().count("\n") == 1
    store.close()


def test_creating_the_same_id_from_two_stores_gives_one_session(tmp_path: Path) -> None:
    first, second = open_store(tmp_path), open_store(tmp_path)
    first.create_session(cwd="/w", session_id="same")
    with pytest.raises(StoreError) as caught:
        second.create_session(cwd="/w", session_id="same")
    assert caught.value.code == "STORE_SESSION_EXISTS"
    first.close()
    second.close()


def test_creating_an_id_a_foreign_log_already_has_does_not_claim_it(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    write_log(tmp_path, "--w--/taken", header("taken"))  # appears after the open: not in the catalogue
    with pytest.raises(StoreError) as caught:
        store.create_session(cwd="/w", session_id="taken")
    assert caught.value.code == "STORE_SESSION_EXISTS"
    assert not (tmp_path / "--w--" / "taken" / LOCK_FILE_NAME).exists()
    store.close()


def test_ids_that_would_be_hidden_folders_are_refused(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    with pytest.raises(StoreError) as caught:
        store.create_session(cwd="/w", session_id=".secret")
    assert caught.value.code == "STORE_INVALID_ID"
    store.close()


def test_the_tail_is_found_behind_lines_longer_than_one_read(tmp_path: Path) -> None:
    path = tmp_path / "log"
    long_event = {"type": "turn/start", "seq": 7, "time": 1, "data": {"pad": "x" * (3 * TAIL_WINDOW)}}
    lines = [json.dumps(header("s")), json.dumps(long_event), "{broken", ""]
    path.write_text("\n".join(lines))
    fd = os.open(path, os.O_RDONLY)
    try:
        assert last_event_seq(fd, path.stat().st_size) == 7
        assert last_event_seq(fd, len(lines[0]) + 1) is None  # the header alone
    finally:
        os.close(fd)


def test_a_log_with_another_hard_link_is_read_but_never_appended_to(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store.create_session(cwd=None, session_id="s1")
    (log,) = tmp_path.rglob("session.jsonl")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.jsonl"
    os.link(log, outside)
    before = outside.read_bytes()
    try:
        with pytest.raises(StoreError) as caught:
            store.append("s1", [{"type": "turn/end", "data": {}}])
        assert caught.value.code == "STORE_LOG_LINKED"
        assert outside.read_bytes() == before
        assert store.read_log("s1")[0]["id"] == "s1"
    finally:
        outside.unlink()
        store.close()


def test_an_append_after_a_seq_readers_refuse_continues_from_the_last_readable_seq(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store.create_session(cwd=None, session_id="s1")
    store.append("s1", [{"type": "turn/start", "data": {}}])
    (log,) = tmp_path.rglob("session.jsonl")
    with log.open("a", encoding="utf-8") as out:  # another program wrote a seq beyond 2^53 and 2^63
        for seq in (2**63, 9_999_999_999_999_999):
            out.write(json.dumps({"type": "turn/end", "seq": seq, "time": 1, "data": {}}) + "\n")
    (written,) = store.append("s1", [{"type": "turn/end", "data": {}}])
    assert written["seq"] == 1
    report = store.read_log_report("s1")
    assert [event["seq"] for event in report.events] == [0, 1] and report.skipped_lines == (3, 4)
    store.close()
