"""Projection of a folded surface to the conversation a reference shows."""

from __future__ import annotations

from typing import Any

import pytest
from sessionref.contract.projection import (
    ProjectedItem,
    UnreachableSurfaceEventError,
    is_compact_checkpoint_source,
    message_text,
    project_conversation_columns,
    project_session_conversation,
)

USER = {"kind": "user"}
CHECKPOINT = {"kind": "plugin", "plugin": "compact", "compactionId": "c1"}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def reasoning(value: str) -> dict[str, Any]:
    return {"type": "reasoning", "text": value}


def user(seq: int, content: list[dict[str, Any]], source: dict[str, Any]) -> dict[str, Any]:
    data = {"id": f"u{seq}", "role": "user", "content": content, "source": source}
    return {"type": "user/message", "seq": seq, "time": seq, "data": data, "surfaceOp": "append"}


def assistant(seq: int, content: list[dict[str, Any]]) -> dict[str, Any]:
    message = {"id": f"a{seq}", "role": "assistant", "content": content, "source": {"kind": "model"}}
    data = {"turn": 1, "step": 1, "message": message}
    return {"type": "assistant/message", "seq": seq, "time": seq, "data": data, "surfaceOp": "append"}


def tool_result(seq: int, output: str) -> dict[str, Any]:
    block = {"type": "tool-result", "content": [text(output)]}
    message = {"id": f"t{seq}", "role": "user", "content": [block]}
    data = {"turn": 1, "step": 1, "message": message}
    return {"type": "tool/result", "seq": seq, "time": seq, "data": data, "surfaceOp": "append"}


def snapshot(*events: dict[str, Any]) -> dict[str, Any]:
    session = {"version": 0, "id": "source", "createdAt": 1, "cwd": "/source"}
    return {"session": session, "capturedThroughSeq": 13, "events": list(events)}


def compacted_conversation() -> dict[str, Any]:
    """The folded surface of upstream's `appendConversation` fixture (seqs 0-1 replaced by a checkpoint)."""
    return snapshot(
        user(2, [text("<compacted-summary>checkpoint</compacted-summary>")], CHECKPOINT),
        user(3, [text("recent user")], USER),
        user(4, [text("workspace secret")], {"kind": "plugin", "plugin": "workspace"}),
        user(5, [text("human steer")], USER),
        user(6, [text("plugin steer")], {"kind": "plugin", "plugin": "goal"}),
        tool_result(7, "tool output"),
        assistant(8, [reasoning("private reasoning"), text("visible answer")]),
        user(9, [text("plugin-generated user")], {"kind": "plugin", "plugin": "goal"}),
        user(10, [reasoning("empty projected user")], USER),
        user(11, [reasoning("empty projected steering")], USER),
        assistant(12, [reasoning("only reasoning")]),
    )


def test_only_direct_user_checkpoints_and_answers_are_projected() -> None:
    assert project_session_conversation(compacted_conversation()) == [
        ProjectedItem("user", "<compacted-summary>checkpoint</compacted-summary>", True),
        ProjectedItem("user", "recent user", False),
        ProjectedItem("user", "human steer", False),
        ProjectedItem("assistant", "visible answer", False),
    ]


def test_injected_reference_snapshots_never_propagate() -> None:
    nested = {"kind": "session-reference", "form": "recall", "version": 1, "references": []}
    items = project_session_conversation(
        snapshot(
            user(0, [text("nested referenced snapshot must not propagate")], nested),
            user(1, [text("direct source question")], USER),
        )
    )
    assert items == [ProjectedItem("user", "direct source question", False)]


def test_text_blocks_join_with_newlines_including_empty_ones() -> None:
    tool_call = {"type": "tool-call", "id": "c", "name": "x", "input": {}}
    assert message_text([text("answer"), tool_call, text("")]) == "answer\n"
    assert message_text([text(""), text("")]) == "\n"
    assert message_text([text("a"), {"type": "text", "text": 5}, {"type": "image"}, text("b")]) == "a\nb"
    assert message_text([]) == ""
    assert message_text(None) == ""
    surface = snapshot(user(0, [text(""), text("")], USER), assistant(1, [text("")]))
    items = project_session_conversation(surface)
    assert items == [ProjectedItem("user", "\n", False)]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ({"kind": "plugin", "plugin": "compact"}, True),
        ({"kind": "plugin", "plugin": "compact", "compactionId": "x", "sourceCommandId": "y"}, True),
        ({"kind": "plugin", "plugin": "Compact"}, False),
        ({"kind": "plugin", "plugin": "compact-basic"}, False),
        ({"kind": "plugin", "plugin": "compact "}, False),
        ({"kind": "user", "plugin": "compact"}, False),
        ({"kind": "plugin"}, False),
        (None, False),
        ("compact", False),
    ],
)
def test_checkpoint_marker_is_exact(source: Any, expected: bool) -> None:
    assert is_compact_checkpoint_source(source) is expected


@pytest.mark.parametrize("kind", ["turn/start", "context/message", "steering/message", "assistant/chunk"])
def test_an_event_outside_the_surface_union_is_unreachable(kind: str) -> None:
    event = {"type": kind, "seq": 0, "time": 5, "data": {"turn": 1, "note": "<x>"}}
    with pytest.raises(UnreachableSurfaceEventError) as raised:
        project_session_conversation(snapshot(event))
    assert str(raised.value) == (
        "unreachable variant in session-reference surface event: "
        f'{{"type":"{kind}","seq":0,"time":5,"data":{{"turn":1,"note":"<x>"}}}}'
    )
    assert raised.value.code is None
    assert raised.value.event is event


def test_an_empty_surface_projects_nothing() -> None:
    assert project_session_conversation(snapshot()) == []
    assert project_session_conversation({"session": {"id": "s"}, "capturedThroughSeq": None}) == []


def test_column_projection_matches_item_projection() -> None:
    surface = compacted_conversation()
    columns = project_conversation_columns(surface)
    items = project_session_conversation(surface)
    assert list(zip(*columns, strict=True)) == [tuple(item) for item in items]
    # `system/message` is a surface type of the later contract: never projected, never an error.
    system = {"type": "system/message", "seq": 0, "time": 0, "data": {}}
    assert project_conversation_columns(snapshot(system)) == ([], [], [])
