"""Log events as a person, a model, a plugin and a tool write them, ready for `store.append`.

One set for every test that builds a real store (the text index, the catalog, the MCP server).
"""

from __future__ import annotations

from typing import Any


def said(text: str, number: int = 0, *, message_id: str | None = None) -> dict[str, Any]:
    """A message a person typed (its id from the text and `number`, unless `message_id` is given)."""
    data = {
        "source": {"kind": "user"},
        "content": [{"type": "text", "text": text}],
        "role": "user",
        "id": message_id if message_id is not None else f"u{number}-{abs(hash(text))}",
    }
    return {"type": "user/message", "data": data, "surfaceOp": "append"}


def answered(text: str, *, message_id: str | None = None) -> dict[str, Any]:
    """A completed assistant reply."""
    message = {
        "id": message_id if message_id is not None else f"a-{abs(hash(text))}",
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "source": {"kind": "model", "provider": "demo", "model": "demo"},
    }
    return {
        "type": "assistant/message",
        "data": {"turn": 1, "step": 1, "message": message},
        "surfaceOp": "append",
    }


def injected(text: str) -> dict[str, Any]:
    """Context a plugin put into the session: never indexed, never published."""
    event = said(text)
    event["data"]["source"] = {"kind": "plugin", "plugin": "workspace"}
    return event


def chunk(text: str) -> dict[str, Any]:
    """A streamed delta: log-only."""
    return {
        "type": "assistant/chunk",
        "data": {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "text": text}},
    }


def tool_output(text: str) -> dict[str, Any]:
    """A tool's result: never indexed, never published."""
    message = {
        "source": {"kind": "tool", "callId": "c"},
        "content": [{"type": "text", "text": text}],
        "role": "tool",
    }
    return {"type": "tool/result", "data": {"message": message}, "surfaceOp": "append"}
