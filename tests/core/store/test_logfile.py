from __future__ import annotations

import json
from pathlib import Path

import pytest
from sessionref.store import StoreError
from sessionref.store.logfile import (
    encode_line,
    expand_packed_row,
    parse_log,
    parse_log_report,
    read_log_bytes,
)
from store_fixtures import write_zstd_frames

HEADER = {"type": "session", "version": 0, "id": "s1", "createdAt": 5, "delegationDepth": 0}


def _event(seq: int) -> dict:
    return {"type": "turn/start", "seq": seq, "time": 10 + seq, "data": {"turn": seq}}


def test_encode_line_keeps_key_order_and_escapes_lone_surrogates() -> None:
    line = encode_line({"type": "x", "seq": 0, "data": {"text": "é"}})
    assert line == '{"type":"x","seq":0,"data":{"text":"é"}}\n'.encode()
    lone = encode_line({"text": "a\ud800b"})
    assert json.loads(lone)["text"] == "a\ud800b"


def _log(*lines: bytes) -> bytes:
    return b"\n".join([json.dumps(HEADER).encode(), *lines])


def test_an_incomplete_last_line_is_not_there_yet() -> None:
    data = _log(json.dumps(_event(0)).encode(), b'{"type":"turn/end","seq":1,"ti')
    report = parse_log_report(data)
    assert [event["seq"] for event in report.events] == [0]
    assert report.skipped_lines == ()


def test_a_complete_last_line_without_its_newline_is_read() -> None:
    assert [event["seq"] for event in parse_log(_log(json.dumps(_event(0)).encode()))[1]] == [0]


def test_bad_line_in_the_middle_is_skipped_and_reported() -> None:
    data = _log(b"{not json", json.dumps(_event(1)).encode(), b"")
    report = parse_log_report(data)
    assert [event["seq"] for event in report.events] == [1]
    assert report.skipped_lines == (2,)


@pytest.mark.parametrize(
    ("line", "why"),
    [
        (b"[1, 2]", "not an object"),
        (b'{"type":"turn/start","data":{}}', "no seq"),
        (b'{"type":"turn/start","seq":"3","data":{}}', "seq is text"),
        (b'{"type":"turn/start","seq":true,"data":{}}', "seq is a boolean"),
        (b'{"type":"turn/start","seq":0,"data":{}}', "seq does not follow"),
        (b'{"type":"turn/start","seq":9,"data":{"x":NaN}}', "NaN is not JSON"),
        (b'{"type":"turn/start","seq":9,"data":' + b"[" * 300 + b"]" * 300 + b"}", "nested too deep"),
        (b'{"type":"turn/start","seq":9,"data":' + b"[" * 5000 + b"]" * 5000 + b"}", "past json's limit"),
        (b'{"type":"text-chunks","seq0":9,"time0":1,"data":{"texts":[],"dt":[]}}', "empty packed row"),
        (b'{"type":"text-chunks","seq0":9,"time0":1,"data":{"texts":["a"],"dt":["x"]}}', "bad deltas"),
        (b'{"type":"turn/start","seq":9,"data":{},"x":"\xff"}', "invalid UTF-8"),
    ],
)
def test_unreadable_lines_are_skipped_one_by_one(line: bytes, why: str) -> None:
    data = _log(json.dumps(_event(0)).encode(), line, json.dumps(_event(10)).encode(), b"")
    report = parse_log_report(data)
    assert [event["seq"] for event in report.events] == [0, 10], why
    assert report.skipped_lines == (3,), why


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
