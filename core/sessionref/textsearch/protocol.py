"""The conversation search seen from outside: a Protocol, its inputs and its results.

The request and the match types are the reference service's (`sessionref.service.protocols`):
one `ConversationRequest` and one `ConversationMatch` from the engine to the widget.

`ConversationSearch` is what the service, the `@` picker, the line mode and the CLI need; the
SQLite FTS5 engine (`TextIndex`) implements it and a server backend (PostgreSQL full-text search)
could implement the same later. Everything here is plain data: results carry raw text and match
spans, never markup, for the UI to render inertly.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol, runtime_checkable

from sessionref.service.conversation_rows import ConversationRow
from sessionref.service.protocols import ConversationRequest, ConversationSearchResult
from sessionref.textsearch.errors import TEXT_SEARCH_CANCELLED, TextSearchError


class SessionFacts(NamedTuple):
    """What ranking and labelling need to know about a session from the discovery index."""

    cwd: str | None
    last_activity: int  # epoch ms
    title: str | None = None  # None or empty: the id is the label


# Given session ids, their facts (one call: the store answers records and titles together); ids
# it does not know (deleted, unreadable) are left out and their matches are dropped.
FactsProvider = Callable[[Sequence[str]], Mapping[str, SessionFacts]]
# `progress(done, total)` during `update`; `total` is None when the caller did not say. Raising
# from it stops the update: what was committed stays, the current batch is rolled back.
Progress = Callable[[int, int | None], None]


@dataclass(frozen=True, slots=True)
class SessionRows:
    """Index these projected rows for a session.

    With `appended=False` the rows are the session's whole projection: rows whose seq is gone
    (a compaction replaced them) are removed, new ones added, the rest kept. With
    `appended=True` they are only what the log gained: rows at or below the indexed seqs are
    ignored. `through_seq` is the log's last raw seq the rows were read from and `source` an
    opaque note of the caller's (e.g. the log's size and mtime); both come back from `indexed()`.
    """

    session_id: str
    rows: Sequence[ConversationRow]
    through_seq: int | None = None
    source: str = ""
    appended: bool = False


@dataclass(frozen=True, slots=True)
class SessionRemoved:
    """Forget everything indexed for a session (its log was deleted).

    A rename needs no change here: titles live in the discovery index, and labels are looked up
    there when results are shown.
    """

    session_id: str


SessionChange = SessionRows | SessionRemoved


class IndexedSession(NamedTuple):
    """What the index holds for a session: the last seq and source note it was fed, and its message count."""

    through_seq: int | None
    source: str
    messages: int


@dataclass(frozen=True, slots=True)
class UpdateReport:
    """What one `update` call did."""

    sessions: int = 0
    inserted: int = 0
    deleted: int = 0


class SearchCancellation:
    """A cancel switch for one search; `cancel()` may be called from any thread.

    The SQLite engine polls it from a progress handler while a statement runs (every
    `PROGRESS_OPS` virtual-machine steps) and between statements, so a search stops within a
    fraction of a millisecond of `cancel()` and raises `TEXT_SEARCH_CANCELLED`.

    Given an `event`, the switch is that event: setting it cancels (how the reference service's
    `ConversationQuery.search_conversations(cancel=...)` reaches the engine).
    """

    def __init__(self, event: threading.Event | None = None) -> None:
        self._event = threading.Event() if event is None else event

    @property
    def cancelled(self) -> bool:
        """True once `cancel()` was called."""
        return self._event.is_set()

    def cancel(self) -> None:
        """Cancel the search (idempotent)."""
        self._event.set()

    def raise_if_cancelled(self) -> None:
        """Raise `TEXT_SEARCH_CANCELLED` if `cancel()` was called."""
        if self._event.is_set():
            raise TextSearchError(TEXT_SEARCH_CANCELLED, "the conversation search was cancelled")


@runtime_checkable
class ConversationSearch(Protocol):
    """Full-text search over what was said in sessions. Implementations are thread-safe."""

    def search(
        self,
        request: ConversationRequest,
        *,
        facts: FactsProvider,
        cancel: SearchCancellation | None = None,
    ) -> ConversationSearchResult:
        """Sessions whose conversation matches `request.text`, one labelled match each (its best
        message), best first.

        Ordered by relevance, then same folder as `request.cwd`, then recent activity; at most
        `request.limit`; never the session `request.exclude_session_id`. Raises
        `TEXT_SEARCH_CANCELLED` when cancelled, `TEXT_SEARCH_INVALID_ARGUMENT` for a limit that is
        not a positive integer.
        """
        ...

    def update(
        self,
        changes: Iterable[SessionChange],
        *,
        progress: Progress | None = None,
        total: int | None = None,
        bulk: bool = False,
    ) -> UpdateReport:
        """Apply changes in batched transactions; what was committed survives an interruption.

        `bulk=True` announces a first build (or a rebuild): the backend may defer its own
        housekeeping to the end.
        """
        ...

    def indexed(self, session_ids: Collection[str] | None = None) -> Mapping[str, IndexedSession]:
        """What is indexed, by session id (for a catch-up to decide what to feed); only of
        `session_ids` when given (a refresh of a few sessions need not read them all)."""
        ...

    def close(self) -> None:
        """Release the backend (idempotent)."""
        ...
