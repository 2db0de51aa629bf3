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
from typing import Literal, Protocol, runtime_checkable

from sessionref.contract.events import SurfaceSnapshot

__all__ = [
    "CandidateSearch",
    "ConversationHit",
    "ConversationHits",
    "ConversationQuery",
    "ConversationStatus",
    "Progress",
    "SessionQuery",
    "SessionRecord",
    "SurfaceSnapshot",
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


@dataclass(frozen=True, slots=True)
class ConversationHit:
    """One session found by what was said in it, as a backend reports it: its best matching message.

    `snippet` is one line of that message's original text (raw data: display it inertly) and
    `spans` the `[start, end)` offsets of the matched words inside it. `time` is the message's
    time and `last_activity` the session's (epoch ms); `same_folder` says its cwd is the cwd the
    search ranked from.
    """

    session_id: str
    seq: int
    role: Literal["user", "assistant"]
    checkpoint: bool
    time: int
    snippet: str
    spans: tuple[tuple[int, int], ...]
    same_folder: bool
    last_activity: int


@dataclass(frozen=True, slots=True)
class ConversationHits:
    """A backend's answer to one conversation search.

    `pending` is a 1-2 character word still being typed that does not filter yet; `complete` is
    False when more messages matched than were examined. While `indexing`, `progress` is
    `(sessions indexed, sessions to index)` when known; `message` says why a search is
    `unavailable`.
    """

    hits: tuple[ConversationHit, ...] = ()
    status: ConversationStatus = "ok"
    pending: str = ""
    complete: bool = True
    progress: tuple[int, int] | None = None
    message: str | None = None


@runtime_checkable
class ConversationQuery(Protocol):
    """What the reference service needs to find sessions by what was said in them.

    The embedded full-text index implements it (`sessionref.textsearch`); a server backend
    (PostgreSQL full-text search) could implement the same. The service calls it in a worker
    thread, never on an event loop; implementations must be thread-safe.
    """

    def search_conversations(
        self,
        text: str,
        *,
        limit: int,
        exclude_session_id: str | None,
        cwd: str | None,
        cancel: threading.Event,
    ) -> ConversationHits:
        """Up to `limit` sessions whose conversation matches `text`, one hit each, best first.

        Ranked by relevance, then same folder as `cwd`, then recent activity; never the session
        `exclude_session_id`. Once `cancel` is set the search should stop soon (a running query
        is interrupted) and may raise; the service has then already given up on it.
        """
        ...


@runtime_checkable
class QuestionSearch(Protocol):
    """A conversation backend that also answers questions an agent typed (not keystrokes): the
    strict all-words query first, then any-word matching ranked by relevance when it finds little.
    Same threading and cancellation rules as `ConversationQuery`."""

    def search_question(
        self,
        text: str,
        *,
        limit: int,
        exclude_session_id: str | None,
        cwd: str | None,
        cancel: threading.Event,
    ) -> ConversationHits:
        """Up to `limit` sessions whose conversation answers the question `text`, best first."""
        ...
