from __future__ import annotations

from typing import Any

import pytest
from sessionref.store import StoreError, fold_surface

HEADER = {"type": "session", "version": 0, "id": "s", "createdAt": 1, "delegationDepth": 0}


def user(seq: int, text: str, op: Any = "append", sources: list[int] | None = None) -> dict:
    event: dict[str, Any] = {
        "type": "user/message",
        "seq": seq,
        "time": seq,
        "data": {"source": {"kind": "user"}, "content": [{"type": "text", "text": text}], "role": "user"},
    }
    if sources is not None:
        event["sourceEventSeqs"] = sources
    event["surfaceOp"] = op
    return event


def log_only(seq: int, kind: str = "turn/start") -> dict:
    return {"type": kind, "seq": seq, "time": seq, "data": {}}


def chunk(seq: int) -> dict:
    return {"type": "assistant/chunk", "seq": seq, "time": seq, "data": {"chunk": {"type": "text-delta"}}}


def seqs(snapshot: dict) -> list[int]:
    return [event["seq"] for event in snapshot["events"]]


def test_append_keeps_order_and_skips_log_only_events_and_chunks() -> None:
    snapshot = fold_surface(HEADER, [log_only(0), user(1, "a"), chunk(2), user(3, "b"), log_only(4)])
    assert seqs(snapshot) == [1, 3]
    assert snapshot["capturedThroughSeq"] == 4
    assert snapshot["session"] == HEADER


def test_empty_log_has_no_captured_seq() -> None:
    assert fold_surface(HEADER, []) == {"session": HEADER, "capturedThroughSeq": None, "events": []}


@pytest.mark.parametrize(
    "op",
    [{"op": "replace", "start": 1, "end": 2}, {"op": "replace", "startSeq": 1, "endSeq": 2}],
)
def test_replace_shadows_the_range_in_both_spellings(op: dict) -> None:
    events = [user(0, "a"), user(1, "b"), user(2, "c"), user(3, "d"), user(4, "sum", op, [1, 2])]
    assert seqs(fold_surface(HEADER, events)) == [0, 4, 3]


def test_replace_of_a_replacement_and_gaps_in_seqs() -> None:
    events = [
        user(1, "a"),
        user(5, "b"),
        user(6, "s1", {"op": "replace", "start": 1, "end": 5}, [1, 5]),
        user(9, "c"),
        user(10, "s2", {"op": "replace", "start": 6, "end": 9}, [6, 9, 1, 5]),
    ]
    snapshot = fold_surface(HEADER, events)
    assert seqs(snapshot) == [10]
    assert snapshot["capturedThroughSeq"] == 10


@pytest.mark.parametrize(
    ("events", "fragment"),
    [
        ([user(0, "a"), user(1, "x", {"op": "replace", "start": 0, "end": 7}, [0])], "not on the surface"),
        (
            [user(0, "a"), user(1, "b"), user(2, "x", {"op": "replace", "start": 1, "end": 0}, [0, 1])],
            "start after",
        ),
        (
            [user(0, "a"), user(1, "b"), user(2, "x", {"op": "replace", "start": 0, "end": 1}, [0])],
            "sourceEventSeqs",
        ),
        ([user(0, "a"), user(1, "x", {"op": "replace", "start": 0, "end": 0})], "sourceEventSeqs"),
        ([user(0, "a"), user(1, "x", {"op": "delete"})], "unknown surfaceOp"),
        ([user(0, "a"), user(0, "b")], "does not follow"),
        ([user(2, "a"), user(1, "b")], "does not follow"),
        ([{**log_only(0), "surfaceOp": "append"}], "log-only"),
        ([{k: v for k, v in user(0, "a").items() if k != "surfaceOp"}], "no surfaceOp"),
        (
            [
                user(0, "a"),
                user(1, "x", {"op": "replace", "start": 0, "end": 0}, [0]),
                user(2, "y", {"op": "replace", "start": 0, "end": 0}, [0]),
            ],
            "not on the surface",
        ),
    ],
)
def test_invalid_surfaces_raise_a_stable_code(events: list[dict], fragment: str) -> None:
    with pytest.raises(StoreError) as caught:
        fold_surface(HEADER, events)
    assert caught.value.code == "STORE_INVALID_LOG"
    assert fragment in caught.value.message


def test_tool_result_replace_may_only_swap_one_result_of_the_same_call() -> None:
    def result(seq: int, call: str, op: Any = "append", sources: list[int] | None = None) -> dict:
        event: dict[str, Any] = {
            "type": "tool/result",
            "seq": seq,
            "time": seq,
            "data": {"message": {"content": [], "source": {"kind": "tool", "callId": call}}},
        }
        if sources is not None:
            event["sourceEventSeqs"] = sources
        event["surfaceOp"] = op
        return event

    ok = [result(0, "c1"), result(1, "c1", {"op": "replace", "start": 0, "end": 0}, [0])]
    assert seqs(fold_surface(HEADER, ok)) == [1]
    bad = [result(0, "c1"), result(1, "c2", {"op": "replace", "start": 0, "end": 0}, [0])]
    with pytest.raises(StoreError):
        fold_surface(HEADER, bad)


@pytest.mark.parametrize(
    "header", [{"type": "other", "id": "s"}, {"type": "session", "id": ""}, {"type": "session"}]
)
def test_bad_header_is_an_invalid_log(header: dict) -> None:
    with pytest.raises(StoreError) as caught:
        fold_surface(header, [])
    assert caught.value.code == "STORE_INVALID_LOG"
