"""Byte-budget retention of one referenced session."""

from __future__ import annotations

import re
from typing import Any

import pytest
from sessionref.contract.js_json import stringify_tag_safe_json, utf8_len
from sessionref.contract.projection import ProjectedItem, UnreachableSurfaceEventError
from sessionref.contract.reference_budget import (
    RetentionStats,
    retain_projected_items,
    retain_referenced_session,
)

NOTICE = re.compile(r"\n\[… omitted (\d+) UTF-8 bytes …\]\Z")
CHECKPOINT_TEXT = "<compacted-summary>checkpoint</compacted-summary>"


def event(seq: int, kind: str, text: str, source: dict[str, Any] | None = None) -> dict[str, Any]:
    content = [{"type": "text", "text": text}]
    if kind == "user/message":
        data: dict[str, Any] = {"id": str(seq), "role": "user", "content": content, "source": source}
    else:
        data = {"turn": 1, "step": 1, "message": {"id": str(seq), "role": "assistant", "content": content}}
    return {"type": kind, "seq": seq, "time": seq, "data": data, "surfaceOp": "append"}


def source_snapshot(*extra: dict[str, Any], cwd: str | None = "/source") -> dict[str, Any]:
    session: dict[str, Any] = {"version": 0, "id": "source", "createdAt": 1}
    if cwd is not None:
        session["cwd"] = cwd
    events = [
        event(2, "user/message", CHECKPOINT_TEXT, {"kind": "plugin", "plugin": "compact"}),
        event(3, "user/message", "recent user", {"kind": "user"}),
        event(5, "user/message", "human steer", {"kind": "user"}),
        event(8, "assistant/message", "visible answer"),
        *extra,
    ]
    return {"session": session, "capturedThroughSeq": 13, "events": events}


def items(*specs: tuple[str, str, bool]) -> list[ProjectedItem]:
    return [ProjectedItem(role, text, checkpoint) for role, text, checkpoint in specs]  # type: ignore[arg-type]


def retain(projected: list[ProjectedItem], max_bytes: int, label: str = "L") -> Any:
    return retain_projected_items(
        projected, session_id="s", label=label, cwd=None, captured_through_seq=3, max_bytes=max_bytes
    )


def test_a_session_that_fits_is_kept_whole_in_upstream_key_order() -> None:
    retained = retain_referenced_session(source_snapshot(), "source", 65536)
    assert retained is not None
    assert list(retained.data) == ["sessionId", "label", "cwd", "capturedThroughSeq", "conversation"]
    assert retained.data == {
        "sessionId": "source",
        "label": "source",
        "cwd": "/source",
        "capturedThroughSeq": 13,
        "conversation": [
            {"role": "user", "text": CHECKPOINT_TEXT},
            {"role": "user", "text": "recent user"},
            {"role": "user", "text": "human steer"},
            {"role": "assistant", "text": "visible answer"},
        ],
    }
    assert retained.stats == RetentionStats(True, 4, 4, 0, 0, False)
    assert retained.full_data == retained.data
    assert retained.kept_indices == (0, 1, 2, 3)
    assert retained.data_bytes == utf8_len(stringify_tag_safe_json(retained.data))


def test_missing_cwd_is_null() -> None:
    retained = retain_referenced_session(source_snapshot(cwd=None), "source", 65536)
    assert retained is not None
    assert retained.data["cwd"] is None


def test_upstream_360_byte_scenario() -> None:
    snapshot = source_snapshot(event(14, "assistant/message", "latest-" + "界" * 400), cwd=None)
    snapshot["capturedThroughSeq"] = 14
    retained = retain_referenced_session(snapshot, "source", 360)
    assert retained is not None
    conversation = retained.data["conversation"]
    assert [item["text"][:7] for item in conversation] == ["<compac", "latest-"]
    assert conversation[0]["text"] == CHECKPOINT_TEXT
    assert "omitted" in conversation[1]["text"]
    assert retained.data_bytes == 358
    assert retained.stats.to_json() == {
        "compacted": True,
        "originalMessages": 5,
        "retainedMessages": 2,
        "omittedMessages": 3,
        "omittedBytes": 1128,
        "truncated": True,
    }
    assert retained.kept_indices == (0, 4)
    assert retained.full_data["conversation"][4]["text"] == "latest-" + "界" * 400


def test_fixed_fields_that_cannot_fit_fail() -> None:
    header = {"version": 0, "id": "source", "createdAt": 1}
    empty = {"session": header, "capturedThroughSeq": None, "events": []}
    assert retain_referenced_session(empty, "source", 16) is None
    assert retain(items(("user", "hi", False)), 150, label="x" * 200) is None


def test_drops_oldest_non_checkpoints_first_and_never_the_newest() -> None:
    projected = items(
        ("user", "old " + "o" * 60, False),
        ("user", "ckpt summary", True),
        ("assistant", "mid " + "m" * 60, False),
        ("user", "newest", False),
    )
    retained = retain(projected, 170)
    assert retained is not None
    assert [item["text"] for item in retained.data["conversation"]] == ["ckpt summary", "newest"]
    assert retained.kept_indices == (1, 3)
    assert retained.stats.omitted_messages == 2
    assert retained.stats.omitted_bytes == 128


def test_the_longest_text_is_shortened_from_its_original() -> None:
    projected = items(("user", "A" * 100, True), ("assistant", "B" * 100, False))
    retained = retain(projected, 200)
    assert retained is not None
    assert retained.data_bytes <= 200
    assert retained.stats.omitted_messages == 0
    assert retained.stats.truncated
    omitted_total = 0
    for original, item in zip(projected, retained.data["conversation"], strict=True):
        notice = NOTICE.search(item["text"])
        if item["text"] == original.text:
            continue
        if notice is None:
            assert item["text"] == ""
            omitted_total += 100
            continue
        kept = item["text"][: notice.start()]
        assert set(kept) <= {original.text[0]}
        assert len(kept) + int(notice.group(1)) == 100
        omitted_total += int(notice.group(1))
    assert omitted_total == retained.stats.omitted_bytes > 0


def test_less_than_signs_cost_six_bytes() -> None:
    retained = retain(items(("user", "<" * 60, False)), 120)
    assert retained is not None
    assert retained.data["conversation"] == [{"role": "user", "text": ""}]
    assert retained.stats.omitted_bytes == 60
    assert retained.data_bytes == 106


def test_nothing_to_shorten_fails() -> None:
    assert retain(items(("user", "", False)), 60) is None


def test_unknown_events_propagate() -> None:
    snapshot = source_snapshot({"type": "turn/start", "seq": 20, "time": 1, "data": {"turn": 2}})
    with pytest.raises(UnreachableSurfaceEventError):
        retain_referenced_session(snapshot, "source", 1000)


def test_many_small_messages_keep_the_newest_that_fit() -> None:
    projected = items(*[("user", f"message {index:05d}", False) for index in range(2000)])
    retained = retain(projected, 2000)
    assert retained is not None
    assert retained.data_bytes <= 2000
    kept = retained.kept_indices
    assert kept[-1] == 1999
    assert kept[0] > 0
    assert list(kept) == list(range(kept[0], 2000))  # the oldest went first, the rest is a suffix
    assert retained.stats.omitted_messages == kept[0]


@pytest.mark.parametrize("header", [None, {}, {"id": None, "createdAt": 1}, {"id": 7, "createdAt": 1}])
def test_a_header_without_a_string_id_is_refused_not_quoted_as_null(header: Any) -> None:
    snapshot = source_snapshot()
    if header is None:
        del snapshot["session"]
    else:
        snapshot["session"] = header
    with pytest.raises(TypeError, match="no session header with a string id"):
        retain_referenced_session(snapshot, "source", 65536)
