"""The narrow read interface the reference service needs from a session backend.

`SessionReferences` only ever talks to a `SessionQuery`. The embedded store
implements it; tests and the conformance harness implement it over plain dicts.
Snapshots are JSON-shaped dicts exactly as they appear on disk (camelCase keys,
key order kept), because byte budgets are measured over their serialisation; their
shape is `sessionref.contract.events.SurfaceSnapshot`, re-exported here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol, runtime_checkable

from sessionref.contract.events import SurfaceSnapshot
from sessionref.contract.uri import SessionReference, format_session_reference_mention

__all__ = [
    "NOT_CONFIGURED",
    "CandidateSearch",
    "ConversationMatch",
    "ConversationQuery",
    "ConversationRequest",
    "ConversationSearchResult",
    "ConversationStatus",
    "Progress",
    "SessionQuery",
    "SessionRecord",
    "SurfaceSnapshot",
    "describe_search_status",
]

Progress = Callable[[int, int], None]
"""`progress(done, total)`: sessions indexed so far during a first-time walk (raise in it to stop)."""


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """Discovery metadata of one session: never requires reading its log.

    `updated_at` is the time of its last activity (the newest event), in epoch
    milliseconds; None when the backend does not know it, in which case
    `last_activity` falls back to `created_at`.
    """

    id: str
    created_at: int
    cwd: str | None = None
    updated_at: int | None = None

    @property
    def last_activity(self) -> int:
        """When the session was last active: `updated_at`, else `created_at`."""
        return self.created_at if self.updated_at is None else self.updated_at


@runtime_checkable
class SessionQuery(Protocol):
    """What the reference service reads. Implementations must be safe to call concurrently."""

    async def list_sessions(self) -> Sequence[SessionRecord]:
        """All sessions, most recent first (the backend's recency order; ties by id ascending)."""
        ...

    async def read_surface(self, session_id: str) -> SurfaceSnapshot:
        """The folded surface of `session_id`; raises if it is unknown or unreadable."""
        ...

    async def read_titles(self, session_ids: Sequence[str]) -> Mapping[str, str | None]:
        """Current titles for the given ids from an index; must never read a session log.

        A missing key or a None value means "no title" (the id is used as the label).
        """
        ...


@runtime_checkable
class CandidateSearch(Protocol):
    """Optional fast path a backend may offer for `list_candidates`.

    It must return exactly what the generic algorithm over `list_sessions` and
    `read_titles` would return (a property test holds the store to this).
    """

    async def search_candidates(
        self, *, exclude_id: str, target_cwd: str | None, needle: str, limit: int
    ) -> Sequence[tuple[SessionRecord, str]]:
        """Up to `limit` (record, label) pairs ranked by (cwd rank, recency).

        `needle` is already lower-cased; empty means no filtering.
        """
        ...


ConversationStatus = Literal["ok", "empty", "too_short", "indexing", "unavailable", "off"]
"""How a conversation search went: `ok` (matches, possibly none), `empty` (no words typed),
`too_short` (no word long enough to search yet), `indexing` (the index is being built: nothing to
search yet), `unavailable` (this backend cannot search: no index, no full-text support), `off`
(the service has no conversation backend at all: a UI shows no such group)."""


NOT_CONFIGURED: Final = "conversation search is not set up here"
"""Why a service built without a `ConversationQuery` finds nothing (status `off`)."""

Role = Literal["user", "assistant"]


@dataclass(frozen=True, slots=True)
class ConversationRequest:
    """One search of what was said, as it travels from the service through the backend to the engine.

    `text` is what was typed; at most `limit` sessions; never the session `exclude_session_id`
    (the searching one: left out once, by the engine); ranked from the folder `cwd`. With
    `question`, `text` is a question an agent typed, not keystrokes: a backend that can answers it
    loosely (not every word need be said; `textsearch.question`), any other searches it as typed.
    """

    text: str
    limit: int = 20
    exclude_session_id: str | None = None
    cwd: str | None = None
    question: bool = False


@dataclass(frozen=True, slots=True)
class ConversationMatch:
    """A session found by what was said in it: its best matching message, labelled.

    The one hit type from the engine to the widget. `label` is the session's discovery label (its
    title, else its id), `snippet` one line of the matched message (raw data: display it inertly)
    with the matched words at `spans` (`[start, end)` offsets into `snippet`). `same_workspace` is
    true when the session's cwd is the cwd the search ranked from; `time` is the message's time,
    `last_activity` the session's (epoch ms); `score` its relevance (bm25, higher is better; 0.0
    when the search was not ranked).
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
    score: float = 0.0

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
    """The answer to one conversation search, from the engine to the widget.

    `status` says how it went (`ConversationStatus`); `pending` is a 1-2 character word still
    being typed (not searched yet); `complete` False when more messages matched than were
    examined; `ranked` False when relevance was not computed (only the word being typed, a filter, or
    every word too common to score: matches are ordered by folder and recency only). `progress`
    (`(indexed, total)` sessions) while `indexing`; `message` why it is `unavailable`. `note` says
    all of it in words for a UI.
    """

    matches: tuple[ConversationMatch, ...] = ()
    status: ConversationStatus = "ok"
    pending: str = ""
    complete: bool = True
    progress: tuple[int, int] | None = None
    message: str | None = None
    ranked: bool = True

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


@runtime_checkable
class ConversationQuery(Protocol):
    """What the reference service needs to find sessions by what was said in them.

    The embedded full-text index implements it (`sessionref.textsearch`); a server backend
    (PostgreSQL full-text search) could implement the same. The service calls it in a worker
    thread, never on an event loop; implementations must be thread-safe.
    """

    def search_conversations(
        self, request: ConversationRequest, *, cancel: threading.Event
    ) -> ConversationSearchResult:
        """Up to `request.limit` labelled sessions whose conversation matches `request.text`, best first.

        Ranked by relevance, then same folder as `request.cwd`, then recent activity; never the
        session `request.exclude_session_id`. Once `cancel` is set the search should stop soon (a
        running query is interrupted) and may raise; the service has then already given up on it.
        """
        ...
