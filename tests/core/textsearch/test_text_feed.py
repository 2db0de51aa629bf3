"""What the index is fed equals the snapshot projection, and the fast reader equals the store's."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from sessionref.contract.projection import project_session_conversation
from sessionref.service.conversation_rows import conversation_rows
from sessionref.store import StoreError
from sessionref.store.access import fold_report
from sessionref.store.conversation_log import read_log_conversation
from sessionref.store.fold import fold_surface
from sessionref.store.logfile import parse_log_report, read_log_bytes
from textsearch_logs import HEADER, LOGS, LogBuilder

DSH_LOGS = Path(__file__).resolve().parents[2] / "fixtures" / "dsh-logs"


@settings(max_examples=300, deadline=None)
@given(LOGS)
def test_rows_are_the_projection_with_seqs_and_times(log: LogBuilder) -> None:
    surface = fold_surface(HEADER, log.unpacked())
    rows = conversation_rows(surface)
    projected = project_session_conversation(surface)
    assert [(row.role, row.text, row.checkpoint) for row in rows] == [
        (item.role, item.text, item.checkpoint) for item in projected
    ]
    surface_seqs = [event["seq"] for event in surface["events"]]
    assert [row.seq for row in rows] == [seq for seq in surface_seqs if seq in {row.seq for row in rows}]
    by_seq = {event["seq"]: event for event in surface["events"]}
    assert all(row.time == by_seq[row.seq]["time"] for row in rows)


def store_way(path: Path) -> tuple[list, int | None]:
    surface = fold_report(parse_log_report(read_log_bytes(path))).snapshot
    return conversation_rows(surface), surface["capturedThroughSeq"]


@settings(max_examples=200, deadline=None)
@given(LOGS)
def test_the_fast_reader_reads_what_the_store_reads(log: LogBuilder) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "session.jsonl"
        path.write_text("\n".join(log.lines(HEADER)) + "\n", "utf-8")
        conversation = read_log_conversation(path)
        assert (conversation.rows, conversation.through_seq) == store_way(path)
        assert conversation.header == HEADER


@pytest.mark.parametrize("folder", sorted(DSH_LOGS.glob("*")), ids=lambda folder: folder.name)
def test_the_fast_reader_reads_real_dsh_logs_like_the_store(folder: Path) -> None:
    path = folder / "session.jsonl"
    try:
        expected = store_way(path)
    except StoreError as error:
        with pytest.raises(StoreError) as raised:
            read_log_conversation(path)
        assert raised.value.code == error.code
        return
    conversation = read_log_conversation(path)
    assert (conversation.rows, conversation.through_seq) == expected


def test_a_torn_final_line_is_ignored_and_an_invalid_fold_costs_its_line(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    user = {"source": {"kind": "user"}, "content": [{"type": "text", "text": "hello"}], "role": "user"}
    lines = [
        json.dumps(HEADER),
        json.dumps({"type": "user/message", "seq": 0, "time": 5, "data": user, "surfaceOp": "append"}),
    ]
    path.write_text("\n".join(lines) + '\n{"type":"user/mess', "utf-8")
    conversation = read_log_conversation(path)
    assert [(row.seq, row.text, row.time) for row in conversation.rows] == [(0, "hello", 5)]
    bad = {
        "type": "user/message",
        "seq": 1,
        "time": 6,
        "data": user,
        "surfaceOp": {"op": "replace", "start": 7, "end": 9},
    }
    path.write_text("\n".join([*lines, json.dumps(bad)]) + "\n", "utf-8")
    conversation = read_log_conversation(path)  # a replace of seqs not on the surface costs its line
    assert ([row.seq for row in conversation.rows], conversation.through_seq) == ([0], 1)
