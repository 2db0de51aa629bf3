"""Conversation search: find a session by what was said in it (issue 10), over a `ConversationQuery`.

`find_conversations` is `SessionReferences.search_conversations`: it runs the backend's search in a
worker thread (never on the event loop) and races it against the caller's `AbortSignal` (an abort
gives `SESSION_REFERENCE_CANCELLED` at once and interrupts the backend's running query through its
`cancel` event). The backend answers labelled matches without the searching session (the request
and the result types are in `protocols`, re-exported here). `read_message_context` is what a
preview shows of a match: the matched message with its neighbours, from the session's current
projection, bounded.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from sessionref.contract.errors import ErrorCode, SessionReferenceError
from sessionref.contract.projection import project_conversation_columns
from sessionref.service.abort import AbortSignal
from sessionref.service.cancellation import race, raise_if_aborted
from sessionref.service.protocols import (
    NOT_CONFIGURED,
    ConversationMatch,
    ConversationQuery,
    ConversationRequest,
    ConversationSearchResult,
    Role,
    SessionQuery,
    SurfaceSnapshot,
    describe_search_status,
)

__all__ = [
    "CONTEXT_TEXT_CHARS",
    "ContextMessage",
    "ConversationMatch",
    "ConversationRequest",
    "ConversationSearchResult",
    "MessageContext",
    "describe_search_status",
    "find_conversations",
    "read_message_context",
]

CONTEXT_TEXT_CHARS: Final = 2_000
"""Characters of each message a `MessageContext` keeps (from its start): a preview shows a line of
each, and a 1 MB message must not travel to the UI whole."""


def checked_search_text(text: object) -> str:
    """`text` if it is a string, else `SESSION_REFERENCE_INVALID_REFERENCE`."""
    if not isinstance(text, str):
        raise SessionReferenceError(ErrorCode.INVALID_REFERENCE, "conversation search text must be a string")
    return text


async def find_conversations(
    backend: ConversationQuery | None, request: ConversationRequest, signal: AbortSignal | None = None
) -> ConversationSearchResult:
    """The backend's answer to `request`, asked in a worker thread and raced against `signal`.

    Without a backend the result is `off`. Backend errors propagate unchanged; an aborted
    `signal` gives `SESSION_REFERENCE_CANCELLED` and sets the backend's `cancel` event.
    """
    raise_if_aborted(signal)
    if backend is None:
        return ConversationSearchResult(status="off", message=NOT_CONFIGURED)
    cancel = threading.Event()
    finished = False
    try:
        found = await race(asyncio.to_thread(backend.search_conversations, request, cancel=cancel), signal)
        finished = True
    finally:
        if not finished:
            cancel.set()  # aborted, cancelled or failed: the backend stops its query
    return found


# -- a match in context ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ContextMessage:
    """One projected message around a match: its seq, role, checkpoint flag and text (at most
    `CONTEXT_TEXT_CHARS` from its start; raw data) and whether it is the matched one."""

    seq: int
    role: Role
    checkpoint: bool
    text: str
    matched: bool


@dataclass(frozen=True, slots=True)
class MessageContext:
    """The matched message of a session with its neighbours, from the session's projection now.

    `position` is the matched message's 1-based place among the session's `total` projected
    messages, None when it is no longer there (the session was compacted since it was indexed):
    `messages` are then the ones around where it stood, none marked `matched`.
    """

    session_id: str
    seq: int
    position: int | None
    total: int
    messages: tuple[ContextMessage, ...]


def projected_with_seqs(surface: SurfaceSnapshot) -> list[tuple[int, Role, bool, str]]:
    """`(seq, role, checkpoint, text)` of every projected message of `surface`, in order (the
    projection's rules, one event at a time so each item keeps its event's seq)."""
    header = surface["session"]
    items: list[tuple[int, Role, bool, str]] = []
    for event in surface["events"]:
        one: SurfaceSnapshot = {"session": header, "capturedThroughSeq": None, "events": [event]}
        columns = project_conversation_columns(one)
        if columns.texts:
            items.append((event["seq"], columns.roles[0], columns.checkpoints[0], columns.texts[0]))
    return items


def message_context(session_id: str, surface: SurfaceSnapshot, seq: int, around: int) -> MessageContext:
    """The `MessageContext` of message `seq` in `surface`, with up to `around` messages each side."""
    items = projected_with_seqs(surface)
    seqs = [item[0] for item in items]
    position: int | None = None
    if seq in seqs:
        index = seqs.index(seq)
        position = index + 1
    else:
        index = next((number for number, item_seq in enumerate(seqs) if item_seq > seq), len(seqs))
    low, high = max(0, index - around), min(len(items), index + around + (1 if position else 0))
    chosen: Sequence[tuple[int, Role, bool, str]] = items[low:high]
    return MessageContext(
        session_id,
        seq,
        position,
        len(items),
        tuple(
            ContextMessage(item_seq, role, checkpoint, text[:CONTEXT_TEXT_CHARS], item_seq == seq)
            for item_seq, role, checkpoint, text in chosen
        ),
    )


async def read_message_context(
    query: SessionQuery, session_id: str, seq: int, *, around: int = 1, signal: AbortSignal | None = None
) -> MessageContext:
    """Read `session_id` (one read of its log) and return message `seq` with `around` neighbours
    each side. Read errors propagate unchanged; an aborted `signal` gives `SESSION_REFERENCE_CANCELLED`."""
    raise_if_aborted(signal)
    surface = await race(query.read_surface(session_id), signal)
    raise_if_aborted(signal)
    return await asyncio.to_thread(message_context, session_id, surface, seq, around)
