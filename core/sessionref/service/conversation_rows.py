"""A session's conversation as rows: the snapshot projection, one row per message with its seq.

`conversation_rows` turns a folded surface into rows with exactly `project_session_conversation`'s
items (direct user text, assistant text, compaction checkpoints), adding the seq and time of the
event each comes from. The store reads them (`SessionStore.read_conversation`); the conversation
index stores and searches them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sessionref.contract.events import SurfaceSnapshot
from sessionref.contract.projection import project_conversation_columns
from sessionref.service.protocols import Role


@dataclass(frozen=True, slots=True)
class ConversationRow:
    """One projected message: the seq and time (epoch ms) of its event, its role, text and checkpoint flag."""

    seq: int
    role: Role
    text: str
    checkpoint: bool = False
    time: int = 0


@dataclass(frozen=True, slots=True)
class SessionConversation:
    """A session's header, its projected rows and the last raw seq of the log they were read from."""

    header: dict[str, Any]
    rows: list[ConversationRow]
    through_seq: int | None


def _event_time(event: Mapping[str, Any]) -> int:
    value = event.get("time")
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def conversation_rows(surface: SurfaceSnapshot) -> list[ConversationRow]:
    """The projection of a folded surface as rows (same items, order, roles, texts and checkpoints)."""
    rows: list[ConversationRow] = []
    header = surface["session"]
    for event in surface["events"]:
        one: SurfaceSnapshot = {"session": header, "capturedThroughSeq": None, "events": [event]}
        columns = project_conversation_columns(one)
        if columns.texts:
            rows.append(
                ConversationRow(
                    event["seq"],
                    columns.roles[0],
                    columns.texts[0],
                    columns.checkpoints[0],
                    _event_time(event),
                )
            )
    return rows
