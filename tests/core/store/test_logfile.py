from __future__ import annotations

import json
from pathlib import Path

import pytest
from sessionref.store import StoreError
from sessionref.store.logfile import (
    append_lines,
    create_log,
    encode_line,
    expand_packed_row,
    parse_log,
    read_log_bytes,
    repair_torn_tail,
)
from store_fixtures import write_zstd_frames

HEADER = {"type": "session", "version": 0, "id": "s1", "createdAt": 5, "delegationDepth": 0}


def _event(seq: int) -> dict:
    return {"type": "turn/start", "seq": seq, "time": 10 + seq, "data": {"turn": seq}}


def test_create_then_append_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "p" / "s1" / "session.jsonl"
    create_log(path, HEADER)
    size = append_lines(path, [encode_line(_event(0)), encode_line(_event(1))])
    assert size == path.stat().st_size
    header, events = parse_log(path.read_bytes())
    assert header == HEADER
    assert [event["seq"] for event in events] == [0, 1]
    with pytest.raises(FileExistsError):
        create_log(path, HEADER)


def test_encode_line_keeps_key_order_and_escapes_lone_surrogates() -> None:
    line = encode_line({"type": "x", "seq": 0, "data": {"text": "é"}})
    assert line == '{"type":"x","seq":0,"data":{"text":"é"}}\n'.encode()
    lone = encode_line({"text": "a\ud800b"})
    assert json.loads(lone)["text"] == "a\ud800b"


def test_torn_tail_is_moved_aside_and_earlier_events_kept(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    create_log(path, HEADER)
    append_lines(path, [encode_line(_event(0))])
    with open(path, "ab") as file:
        file.write(b'{"type":"turn/end","seq":1,"ti')
    _header, events = parse_log(path.read_bytes())
    assert [event["seq"] for event in events] == [0]
    moved = repair_torn_tail(path)
    assert moved == b'{"type":"turn/end","seq":1,"ti'
    assert path.read_bytes().endswith(b"\n")
    assert (tmp_path / "session.jsonl.torn").read_bytes() == moved + b"\n"
    assert [event["seq"] for event in parse_log(path.read_bytes())[1]] == [0]
    assert repair_torn_tail(path) == b""


def test_complete_final_line_without_newline_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    create_log(path, HEADER)
    with open(path, "ab") as file:
        file.write(json.dumps(_event(0)).encode())
    assert [event["seq"] for event in parse_log(path.read_bytes())[1]] == [0]
    assert repair_torn_tail(path) == b""
    assert path.read_bytes().endswith(b"}\n")
    assert not (tmp_path / "session.jsonl.torn").exists()


def test_bad_line_in_the_middle_is_an_invalid_log() -> None:
    data = b"\n".join([json.dumps(HEADER).encode(), b"{not json", json.dumps(_event(1)).encode(), b""])
    with pytest.raises(StoreError) as caught:
        parse_log(data)
    assert caught.value.code == "STORE_INVALID_LOG"
    assert "line 2" in caught.value.message


@pytest.mark.parametrize("data", [b"", b"\n\n", b'{"type":"turn/start","seq":0}\n', b"[1]\n"])
def test_log_without_header_is_invalid(data: bytes) -> None:
    with pytest.raises(StoreError) as caught:
        parse_log(data)
    assert caught.value.code == "STORE_INVALID_LOG"


def test_packed_text_rows_expand_to_chunks_with_times() -> None:
    row = {
        "type": "text-chunks",
        "seq0": 7,
        "time0": 100,
        "data": {"turn": 1, "step": 2, "index": 1, "dt": [0, 5], "texts": ["a", "b", "c"]},
    }
    chunks = expand_packed_row(row)
    assert [(c["seq"], c["time"]) for c in chunks] == [(7, 100), (8, 100), (9, 105)]
    assert chunks[2] == {
        "type": "assistant/chunk",
        "seq": 9,
        "time": 105,
        "data": {"turn": 1, "step": 2, "chunk": {"type": "text-delta", "index": 1, "text": "c"}},
    }


def test_packed_tool_call_and_reasoning_rows() -> None:
    tool = {
        "type": "tool-call-chunks",
        "seq0": 0,
        "time0": 1,
        "data": {"turn": 1, "step": 1, "index": 2, "dt": [1], "id": "c1", "name": "bash", "args": ["{", "}"]},
    }
    chunk = expand_packed_row(tool)[1]["data"]["chunk"]
    assert chunk == {"type": "tool-call-delta", "index": 2, "id": "c1", "name": "bash", "argumentsDelta": "}"}
    reasoning = {"type": "reasoning-chunks", "seq0": 3, "time0": 1, "data": {"dt": [], "texts": ["x"]}}
    assert expand_packed_row(reasoning)[0]["data"]["chunk"]["type"] == "reasoning-delta"
    with pytest.raises(StoreError):
        expand_packed_row({"type": "text-chunks", "seq0": 0, "time0": 0, "data": {"texts": []}})


def test_zstd_log_with_several_frames_reads_like_plain(tmp_path: Path) -> None:
    lines = [json.dumps(HEADER)] + [json.dumps(_event(seq)) for seq in range(50)]
    data = ("\n".join(lines) + "\n").encode()
    path = tmp_path / "session.jsonl.zstd"
    write_zstd_frames(path, data, frames=4)
    assert read_log_bytes(path) == data
    assert len(parse_log(read_log_bytes(path))[1]) == 50


def test_corrupt_zstd_is_unreadable(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl.zstd"
    path.write_bytes(b"definitely not zstd")
    with pytest.raises(StoreError) as caught:
        read_log_bytes(path)
    assert caught.value.code == "STORE_UNREADABLE"
