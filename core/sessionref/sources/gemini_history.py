"""A Gemini CLI session's current history: message records, `$set` replacements and rewinds.

Message ids in order, the last write of an id wins in place, `{"$rewindTo": id}` truncates,
and a `$set` of `messages` replaces the whole history (read as a compaction: its first
conversation item with text becomes the checkpoint). The decisions are in the `gemini` module's doc.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from sessionref.contract.events import SurfaceEvent
from sessionref.sources.foreign import assistant_event, checkpoint_event, user_event
from sessionref.sources.lines import parse_timestamp

PROVIDER: Final = "google"
UNKNOWN_MODEL: Final = "unknown"
CONVERSATION_TYPES: Final = ("user", "gemini")


def message_text(content: object) -> str:
    """The text of a message's `content`: a string, or its non-thought `text` parts joined."""
    if isinstance(content, str):
        return content
    parts = [content] if isinstance(content, dict) else content
    if not isinstance(parts, list):
        return ""
    return "".join(
        part["text"]
        for part in parts
        if isinstance(part, dict) and isinstance(part.get("text"), str) and part.get("thought") is not True
    )


def is_metadata(record: Mapping[str, Any]) -> bool:
    """Whether `record` is the metadata record (a `sessionId` and no `type`)."""
    return isinstance(record.get("sessionId"), str) and "type" not in record


def is_message(record: Mapping[str, Any]) -> bool:
    """Whether `record` is a message record (an `id` and a `type`)."""
    return isinstance(record.get("id"), str) and isinstance(record.get("type"), str)


@dataclass(slots=True)
class _Entry:
    kind: str
    text: str
    seq: int
    time: int
    model: str
    checkpoint: str | None = None  # the compaction id when this item stands for a replaced history


def _time_or_zero(value: object) -> int:
    moment = parse_timestamp(value)
    return 0 if moment is None else moment


class GeminiHistory:
    """The current message list: ids in order, last write wins, rewinds truncate."""

    def __init__(self) -> None:
        self.entries: dict[str, _Entry] = {}
        self.position = 0  # the seq of the last message record or history item read

    def entry(self, record: Mapping[str, Any]) -> _Entry:
        model = record.get("model")
        self.position += 1
        return _Entry(
            kind=record["type"],
            text=message_text(record.get("content")),
            seq=self.position,
            time=_time_or_zero(record.get("timestamp")),
            model=model if isinstance(model, str) and model else UNKNOWN_MODEL,
        )

    def put(self, record: Mapping[str, Any]) -> None:
        previous = self.entries.get(record["id"])
        entry = self.entry(record)
        if previous is not None:
            entry.checkpoint = previous.checkpoint
        self.entries[record["id"]] = entry  # an existing key keeps its position

    def rewind(self, message_id: str) -> None:
        if message_id not in self.entries:
            return
        ids = list(self.entries)
        for dropped in ids[ids.index(message_id) :]:
            del self.entries[dropped]

    def replace(self, messages: list[Any], seq: int) -> None:
        self.entries = {}
        compaction_id: str | None = f"line-{seq}"
        for index, item in enumerate(messages):
            if not isinstance(item, dict) or not isinstance(item.get("type"), str):
                continue
            message_id = item["id"] if isinstance(item.get("id"), str) else f"line-{seq}-{index}"
            entry = self.entry(item)
            if compaction_id is not None and entry.kind in CONVERSATION_TYPES and entry.text:
                entry.checkpoint, compaction_id = compaction_id, None
            self.entries.pop(message_id, None)
            self.entries[message_id] = entry

    def events(self) -> list[SurfaceEvent]:
        """The conversation now: messages with text, the first of a replaced history as a checkpoint."""
        events: list[SurfaceEvent] = []
        for message_id, entry in self.entries.items():
            if not entry.text or entry.kind not in CONVERSATION_TYPES:
                continue
            if entry.checkpoint is not None:
                events.append(
                    checkpoint_event(entry.seq, entry.time, message_id, entry.checkpoint, [entry.text])
                )
            elif entry.kind == "user":
                events.append(user_event(entry.seq, entry.time, message_id, [entry.text]))
            else:
                events.append(
                    assistant_event(entry.seq, entry.time, message_id, [entry.text], PROVIDER, entry.model)
                )
        return events


def apply_record(history: GeminiHistory, seq: int, record: Mapping[str, Any]) -> None:
    """Apply record `seq` of a session file (a message, a `$set` or a `$rewindTo`) to `history`."""
    update = record.get("$set")
    if isinstance(update, dict):
        if isinstance(update.get("messages"), list):
            history.replace(update["messages"], seq)
    elif isinstance(record.get("$rewindTo"), str):
        history.rewind(record["$rewindTo"])
    elif is_message(record):
        history.put(record)
