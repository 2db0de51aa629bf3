"""Conversation search: find a session by what was said in it (issue 10), over a `ConversationQuery`.

`find_conversations` is `SessionReferences.search_conversations`: it runs the backend's search in a
worker thread (never on the event loop), races it against the caller's `AbortSignal` (an abort
gives `SESSION_REFERENCE_CANCELLED` at once and interrupts the backend's running query through its
`cancel` event), labels every match from the title index (never a log) and leaves out the
searching session. `read_message_context` is what a preview shows of a match: the matched message
with its neighbours, from the session's current projection, bounded.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from sessionref.contract.errors import ErrorCode, SessionReferenceError
from sessionref.contract.projection import project_conversation_columns
from sessionref.contract.uri import SessionReference, format_session_reference_mention
from sessionref.service.abort import AbortSignal
from sessionref.service.cancellation import race, raise_if_aborted
from sessionref.service.candidates import label_from_title, read_titles
from sessionref.service.protocols import (
    ConversationHits,
    ConversationQuery,
    ConversationStatus,
    QuestionSearch,
    SessionQuery,
    SurfaceSnapshot,
)

__all__ = [
    "CONTEXT_TEXT_CHARS",
    "ContextMessage",
    "ConversationMatch",
    "ConversationSearchResult",
    "MessageContext",
    "describe_search_status",
    "find_conversations",
    "read_message_context",
]

NOT_CONFIGURED: Final = "conversation search is not set up here"
"""Why a service built without a `ConversationQuery` finds nothing (status `off`)."""

CONTEXT_TEXT_CHARS: Final = 2_000
"""Characters of each message a `MessageContext` keeps (from its start): a preview shows a line of
each, and a 1 MB message must not travel to the UI whole."""

Role = Literal["user", "assistant"]


@dataclass(frozen=True, slots=True)
class ConversationMatch:
    """A session found by what was said in it: its best matching message.

    `label` is the session's discovery label (its title, else its id), `snippet` one line of the
    matched message (raw data: display it inertly) with the matched words at `spans`
    (`[start, end)` offsets into `snippet`). `same_workspace` is true when the session shares the
    searching agent's cwd; `time` is the message's time, `last_activity` the session's (epoch ms).
    """

    session_id: str
    label: str
    seq: int
    role: Role
    checkpoint: bool
    time: int
    snippet: str
    spans: tuple[tuple[int, int], ...]
    same_workspace: bool
    last_activity: int

    @property
    def mention(self) -> str:
        """The canonical mention token `@[label](dsh-session:...)` of the matched session."""
        return format_session_reference_mention(SessionReference(self.session_id, self.label))

    def to_json(self) -> dict[str, Any]:
        """`{sessionId, label, role, seq, checkpoint, time, lastActivity, sameWorkspace, snippet, mention}`
        with `snippet` as `{text, spans}` (spans as `[start, end]` pairs)."""
        return {
            "sessionId": self.session_id,
            "label": self.label,
            "role": self.role,
            "seq": self.seq,
            "checkpoint": self.checkpoint,
            "time": self.time,
            "lastActivity": self.last_activity,
            "sameWorkspace": self.same_workspace,
            "snippet": {"text": self.snippet, "spans": [list(span) for span in self.spans]},
            "mention": self.mention,
        }


@dataclass(frozen=True, slots=True)
class ConversationSearchResult:
    """What `search_conversations` found, and why it found nothing when it could not search.

    `status` is the backend's (`ConversationStatus`); `pending` a 1-2 character word still being
    typed (not searched yet); `complete` False when more messages matched than were examined.
    `progress` (`(indexed, total)` sessions) while `indexing`; `message` why it is `unavailable`.
    `note` says all of it in words for a UI.
    """

    matches: tuple[ConversationMatch, ...] = ()
    status: ConversationStatus = "ok"
    pending: str = ""
    complete: bool = True
    progress: tuple[int, int] | None = None
    message: str | None = None

    @property
    def note(self) -> str | None:
        """Why there are no matches, in a few words (None when the search ran): `describe_search_status`."""
        return describe_search_status(self.status, self.progress, self.message)


def describe_search_status(
    status: ConversationStatus, progress: tuple[int, int] | None = None, message: str | None = None
) -> str | None:
    """The words a UI shows for a search that did not run: "type 3 letters…", "indexing 40%…", or why
    it is unavailable. None for `ok` (the matches speak for themselves)."""
    if status == "too_short":
        return "type 3 letters to search what was said"
    if status == "empty":
        return "type to search what was said"
    if status == "indexing":
        if progress is not None and progress[1] > 0:
            percent = min(99, progress[0] * 100 // progress[1])
            return f"indexing what was said {percent}%…"
        return "indexing what was said…"
    if status == "unavailable":
        return f"search of what was said is unavailable: {message or 'no index'}"
    if status == "off":
        return message or NOT_CONFIGURED
    return None


def checked_search_text(text: object) -> str:
    """`text` if it is a string, else `SESSION_REFERENCE_INVALID_REFERENCE`."""
    if not isinstance(text, str):
        raise SessionReferenceError(ErrorCode.INVALID_REFERENCE, "conversation search text must be a string")
    return text


async def find_conversations(
    backend: ConversationQuery | None,
    query: SessionQuery,
    *,
    agent_id: str,
    agent_cwd: str | None,
    text: str,
    limit: int,
    signal: AbortSignal | None = None,
    question: bool = False,
) -> ConversationSearchResult:
    """Up to `limit` sessions other than `agent_id` whose conversation matches `text`, best first.

    With `question`, `text` is a question an agent typed: a `QuestionSearch` backend answers it
    (any other backend searches it as typed text).
    The backend searches in a worker thread; labels come from `query.read_titles` (the index).
    Without a backend the result is `off`. Backend errors propagate unchanged; an aborted
    `signal` gives `SESSION_REFERENCE_CANCELLED` and sets the backend's `cancel` event.
    """
    raise_if_aborted(signal)
    if backend is None:
        return ConversationSearchResult(status="off", message=NOT_CONFIGURED)
    cancel = threading.Event()
    finished = False
    try:
        search = backend.search_question if question and isinstance(backend, QuestionSearch) else None
        found: ConversationHits = await race(
            asyncio.to_thread(
                search or backend.search_conversations,
                text,
                limit=limit,
                exclude_session_id=agent_id or None,
                cwd=agent_cwd,
                cancel=cancel,
            ),
            signal,
        )
        hits = [hit for hit in found.hits if hit.session_id != agent_id]
        titles = await read_titles(query, [hit.session_id for hit in hits], signal)
        finished = True
    finally:
        if not finished:
            cancel.set()  # aborted, cancelled or failed: the backend stops its query
    matches = tuple(
        ConversationMatch(
            hit.session_id,
            label_from_title(hit.session_id, titles.get(hit.session_id)),
            hit.seq,
            hit.role,
            hit.checkpoint,
            hit.time,
            hit.snippet,
            hit.spans,
            hit.same_folder,
            hit.last_activity,
        )
        for hit in hits[:limit]
    )
    return ConversationSearchResult(
        matches, found.status, found.pending, found.complete, found.progress, found.message
    )


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
