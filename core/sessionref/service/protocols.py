"""The narrow read interface the reference service needs from a session backend.

`SessionReferences` only ever talks to a `SessionQuery`. The embedded store
implements it; tests and the conformance harness implement it over plain dicts.
Snapshots are JSON-shaped dicts exactly as they appear on disk (camelCase keys,
key order kept), because byte budgets are measured over their serialisation; their
shape is `sessionref.contract.events.SurfaceSnapshot`, re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from sessionref.contract.events import SurfaceSnapshot

__all__ = ["CandidateSearch", "Progress", "SessionQuery", "SessionRecord", "SurfaceSnapshot"]

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
