"""User-message construction and the model conversation."""

from __future__ import annotations

import uuid

import pytest
from sessionref.agent import AgentError, conversation_from_surface, make_user_message, message_text
from sessionref.agent.messages import check_user_message


def test_make_user_message_from_text_has_upstream_shape_and_key_order() -> None:
    message = make_user_message("hi")
    assert list(message) == ["source", "content", "role", "id"]
    assert message["source"] == {"kind": "user"}
    assert message["content"] == [{"type": "text", "text": "hi"}]
    assert uuid.UUID(message["id"]).version == 4
    assert make_user_message("hi")["id"] != message["id"]


def test_make_user_message_copies_content_and_source() -> None:
    blocks = [{"type": "text", "text": "a"}]
    source = {"kind": "plugin", "plugin": "x", "meta": {"n": 1}}
    message = make_user_message(blocks, source)
    blocks[0]["text"] = "changed"
    source["meta"]["n"] = 2
    assert message["content"] == [{"type": "text", "text": "a"}]
    assert message["source"] == {"kind": "plugin", "plugin": "x", "meta": {"n": 1}}


@pytest.mark.parametrize(
    "bad",
    [
        "text",
        {"role": "assistant", "id": "x", "source": {"kind": "user"}, "content": []},
        {"role": "user", "id": "", "source": {"kind": "user"}, "content": []},
        {"role": "user", "id": "x", "source": {}, "content": []},
        {"role": "user", "id": "x", "source": {"kind": "user"}, "content": "text"},
    ],
)
def test_check_user_message_rejects_malformed(bad: object) -> None:
    with pytest.raises(AgentError) as caught:
        check_user_message(bad)
    assert caught.value.code == "AGENT_INVALID_MESSAGE"


def test_message_text_joins_text_blocks_only() -> None:
    message = {"content": [{"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "b"}]}
    assert message_text(message) == "a\nb"


def test_conversation_from_surface_keeps_user_and_assistant_text_in_order() -> None:
    events = [
        {"type": "user/message", "data": make_user_message("snapshot", {"kind": "session-reference"})},
        {"type": "user/message", "data": make_user_message("question")},
        {"type": "tool/result", "data": {"message": {"content": [{"type": "text", "text": "tool"}]}}},
        {
            "type": "assistant/message",
            "data": {
                "turn": 1,
                "step": 1,
                "message": {"role": "assistant", "content": [{"type": "text", "text": "A"}]},
            },
        },
        {"type": "assistant/message", "data": {"turn": 1, "step": 2, "message": {"content": []}}},
    ]
    assert conversation_from_surface(events) == [
        {"role": "user", "content": "snapshot"},
        {"role": "user", "content": "question"},
        {"role": "assistant", "content": "A"},
    ]
