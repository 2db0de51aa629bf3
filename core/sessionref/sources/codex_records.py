"""What Codex CLI rollout records mean, and the conversation they project to.

A person's prompts versus the scaffolding the tool injects, the texts of `response_item`
messages, the summary a `compacted` record stands for, and `CodexConversation`: both candidate
projections of a session (its `event_msg` records, else its `response_item` messages), built in
one pass. The decisions behind each are in the `codex` module's doc.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from sessionref.contract.events import SurfaceEvent
from sessionref.sources.foreign import assistant_event, checkpoint_event, user_event
from sessionref.sources.lines import parse_timestamp

DEFAULT_PROVIDER: Final = "openai"
UNKNOWN_MODEL: Final = "unknown"
SCAFFOLDING_PREFIXES: Final = (
    "<environment_context>",
    "<user_instructions>",
    "<INSTRUCTIONS>",
    "# AGENTS.md instructions",
    "<user_shell_command>",
    "<turn_aborted>",
)
CHECKPOINT_HISTORY_SEPARATOR: Final = "\n\n"


def record_payload(record: Mapping[str, Any]) -> Mapping[str, Any]:
    """A record's `payload` object (empty when it has none)."""
    payload = record.get("payload")
    return payload if isinstance(payload, dict) else {}


def is_scaffolding(text: str) -> bool:
    """Whether a user-role text is something Codex injected rather than something a person typed."""
    return text.lstrip().startswith(SCAFFOLDING_PREFIXES)


def typed_prompt(payload: Mapping[str, Any]) -> str | None:
    """The text of an `event_msg` `user_message` a person typed, or None."""
    text = payload.get("message")
    kind = payload.get("kind")
    if not isinstance(text, str) or not text or (kind is not None and kind != "plain"):
        return None
    return None if is_scaffolding(text) else text


def item_texts(payload: Mapping[str, Any]) -> tuple[str | None, list[str]]:
    """`(role, texts)` of a `response_item` message: user `input_text` minus scaffolding, or `output_text`."""
    role = payload.get("role")
    content = payload.get("content")
    if payload.get("type") != "message" or role not in ("user", "assistant") or not isinstance(content, list):
        return None, []
    wanted = "input_text" if role == "user" else "output_text"
    texts = [
        item["text"]
        for item in content
        if isinstance(item, dict) and item.get("type") == wanted and isinstance(item.get("text"), str)
    ]
    if role == "user":
        texts = [text for text in texts if not is_scaffolding(text)]
    return role, [text for text in texts if text]


def checkpoint_text(payload: Mapping[str, Any]) -> str | None:
    """The summary a `compacted` record stands for, or None when it carries no text."""
    message = payload.get("message")
    if isinstance(message, str) and message.strip():
        return message
    history = payload.get("replacement_history")
    if not isinstance(history, list):
        return None
    texts = [text for item in history if isinstance(item, dict) for text in item_texts(item)[1]]
    return CHECKPOINT_HISTORY_SEPARATOR.join(texts) or None


@dataclass(slots=True)
class CodexConversation:
    """The two candidate projections, built side by side in one pass."""

    provider: str = DEFAULT_PROVIDER
    model: str = UNKNOWN_MODEL
    events: list[SurfaceEvent] = field(default_factory=list)
    item_events: list[SurfaceEvent] = field(default_factory=list)
    has_events: bool = False

    def take(self, seq: int, record: Mapping[str, Any]) -> None:
        """Add what record `seq` says to both projections (a checkpoint replaces both)."""
        kind = record.get("type")
        payload = record_payload(record)
        time = parse_timestamp(record.get("timestamp")) or 0
        message_id = f"line-{seq}"
        if (
            kind == "session_meta"
            and isinstance(payload.get("model_provider"), str)
            and payload["model_provider"]
        ):
            self.provider = payload["model_provider"]
        elif kind == "turn_context" and isinstance(payload.get("model"), str) and payload["model"]:
            self.model = payload["model"]
        elif kind == "event_msg" and payload.get("type") in ("user_message", "agent_message"):
            self.has_events = True
            if payload["type"] == "user_message":
                text = typed_prompt(payload)
                if text:
                    self.events.append(user_event(seq, time, message_id, [text]))
            elif isinstance(payload.get("message"), str) and payload["message"]:
                self.events.append(
                    assistant_event(seq, time, message_id, [payload["message"]], self.provider, self.model)
                )
        elif kind == "response_item":
            role, texts = item_texts(payload)
            if role == "user" and texts:
                self.item_events.append(user_event(seq, time, message_id, texts))
            elif role == "assistant" and texts:
                self.item_events.append(
                    assistant_event(seq, time, message_id, texts, self.provider, self.model)
                )
        elif kind == "compacted" and (text := checkpoint_text(payload)) is not None:
            checkpoint = checkpoint_event(seq, time, message_id, message_id, [text])
            self.events = [checkpoint]
            self.item_events = [checkpoint]

    @property
    def projected(self) -> list[SurfaceEvent]:
        """The `event_msg` projection, or the `response_item` one for a session with no events."""
        return self.events if self.has_events else self.item_events
