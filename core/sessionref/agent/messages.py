"""User-message construction and the conversation the model sees.

Messages are plain JSON-shaped dicts in the upstream key order
``{"source", "content", "role", "id"}``; the log stores them verbatim.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from sessionref.agent.errors import AGENT_INVALID_MESSAGE, AgentError
from sessionref.contract.projection import message_text as content_text

DIRECT_SOURCE: dict[str, Any] = {"kind": "user"}


def make_user_message(
    text_or_content: str | Sequence[Mapping[str, Any]], source: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A new user message with a fresh UUID v4 id.

    A string becomes one text block; a list of content blocks is deep-copied, so later changes to
    the caller's objects never reach the message. ``source`` defaults to a direct prompt
    (``{"kind": "user"}``).
    """
    if isinstance(text_or_content, str):
        content: list[dict[str, Any]] = [{"type": "text", "text": text_or_content}]
    else:
        content = [dict(copy.deepcopy(block)) for block in text_or_content]
    return {
        "source": copy.deepcopy(dict(source)) if source is not None else dict(DIRECT_SOURCE),
        "content": content,
        "role": "user",
        "id": str(uuid.uuid4()),
    }


def check_user_message(message: Any) -> dict[str, Any]:
    """Return ``message`` if it is a well-formed user message, else raise AGENT_INVALID_MESSAGE."""
    if not isinstance(message, dict):
        raise AgentError(AGENT_INVALID_MESSAGE, "a user message must be a dict")
    if message.get("role") != "user":
        raise AgentError(AGENT_INVALID_MESSAGE, 'a user message must have role "user"')
    message_id = message.get("id")
    if not isinstance(message_id, str) or not message_id:
        raise AgentError(AGENT_INVALID_MESSAGE, "a user message must have a non-empty string id")
    if not isinstance(message.get("source"), dict) or not isinstance(message["source"].get("kind"), str):
        raise AgentError(AGENT_INVALID_MESSAGE, "a user message must have a source with a string kind")
    content = message.get("content")
    if not isinstance(content, list) or not all(isinstance(block, dict) for block in content):
        raise AgentError(AGENT_INVALID_MESSAGE, "a user message must have a list of content blocks")
    return message


def message_text(message: Mapping[str, Any]) -> str:
    """The text of a message: its text blocks joined by newlines (other block types are skipped)."""
    content = message.get("content")
    return content if isinstance(content, str) else content_text(content)


def conversation_from_surface(
    events: Sequence[Mapping[str, Any]], *, steered_ids: Collection[str] = ()
) -> list[dict[str, Any]]:
    """The chat messages a model is called with, from a session's folded surface events.

    Every user message (direct prompts, snapshots, checkpoints) becomes a ``user`` turn and every
    assistant message an ``assistant`` turn, in surface order; tool results and empty texts are
    left out because the models we drive are text-only. User messages whose id is in
    `steered_ids` (claimed by a later step of a running turn) carry ``"steer": True``, which
    models may use and the wire format drops.
    """
    conversation: list[dict[str, Any]] = []
    for event in events:
        kind = event.get("type")
        data = event.get("data")
        if not isinstance(data, Mapping):
            continue
        if kind == "user/message":
            role, text = "user", message_text(data)
        elif kind == "assistant/message":
            inner = data.get("message")
            if not isinstance(inner, Mapping):
                continue
            role, text = "assistant", message_text(inner)
        else:
            continue
        if text:
            entry: dict[str, Any] = {"role": role, "content": text}
            if role == "user" and data.get("id") in steered_ids:
                entry["steer"] = True
            conversation.append(entry)
    return conversation
