"""Keeping the conversation index in step with a store: what to feed, read and forget.

The store says where each session's conversation is and a cheap `version` of it
(`SessionStore.conversation_sources()`); the index says what it was last fed (`indexed()`: the
version as its `source` note). `plan_catch_up` compares the two: a session that is new or whose
version changed is read again whole (the engine diffs its rows by seq, so a compaction removes
the messages its checkpoint replaced), a session no longer listed is removed, and a rename needs
nothing (titles live in the discovery index). `catch_up` applies a plan: each session is read by
the store (`SessionStore.read_conversation`, which owns the log formats and reads in the calling
thread). A source that cannot be read is skipped and counted, never a failed catch-up; what the
index held for it stays.

When more than `BUILD_SHARE` of the store's sessions are not in the index at all (a first build,
a rebuild after the index was damaged or deleted, a large import), the catch-up is a *build*:
sessions are fed oldest activity first (so an interrupted build leaves the older, quieter
sessions done and the next one reads the rest), in bulk mode, with progress.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol

from sessionref.contract.errors import CodedError
from sessionref.contract.projection import UnreachableSurfaceEventError
from sessionref.service.conversation_rows import SessionConversation
from sessionref.textsearch.protocol import (
    ConversationSearch,
    IndexedSession,
    SessionChange,
    SessionRemoved,
    SessionRows,
)

log = logging.getLogger("sessionref.textsearch")

BUILD_SHARE: Final = 0.5
"""A catch-up for which more than this share of the store's sessions are new to the index is a
build (see the module doc): searches say "indexing" until it ends. Below it the index already
answers for most sessions, and searches go on while the rest is read."""


class SourceLike(Protocol):
    """One session as the store lists it for the index (`sessionref.store.ConversationSource` fits)."""

    @property
    def session_id(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def last_activity(self) -> int: ...


ReadConversation = Callable[[str], SessionConversation]
"""`read_conversation(session_id)`: the projected rows of a session, read in the calling thread."""

Progress = Callable[[int, int | None], None]
"""`progress(done, total)`: sessions fed or removed so far during a build."""


@dataclass(frozen=True, slots=True)
class CatchUpPlan:
    """What one catch-up does: sessions to read (`feed`, oldest activity first on a build), ids to
    remove, and whether it is a build."""

    feed: tuple[SourceLike, ...]
    removed: tuple[str, ...]
    build: bool

    @property
    def total(self) -> int:
        """Changes the plan makes (reads and removals)."""
        return len(self.feed) + len(self.removed)


@dataclass
class CatchUpReport:
    """What a catch-up did: sessions read and fed, removed, skipped (unreadable), messages added and
    removed, and whether it was a build."""

    fed: int = 0
    removed: int = 0
    skipped: list[str] = field(default_factory=list)
    inserted: int = 0
    deleted: int = 0
    build: bool = False


def plan_catch_up(
    sources: Sequence[SourceLike],
    indexed: Mapping[str, IndexedSession],
    *,
    known_unreadable: Mapping[str, str] | None = None,
) -> CatchUpPlan:
    """Compare the store's sources with what the index holds (see the module doc).

    `known_unreadable` maps ids to a version that already failed to read: it is not read again
    until its version changes.
    """
    failed = known_unreadable or {}
    listed = {source.session_id for source in sources}
    feed = [
        source
        for source in sources
        if (held := indexed.get(source.session_id)) is None or held.source != source.version
        if failed.get(source.session_id) != source.version
    ]
    removed = tuple(sorted(session_id for session_id in indexed if session_id not in listed))
    new = sum(1 for source in feed if source.session_id not in indexed)
    build = new > BUILD_SHARE * len(sources)
    if build:
        feed.sort(key=lambda source: (source.last_activity, source.session_id))
    return CatchUpPlan(tuple(feed), removed, build)


def read_rows(source: SourceLike, read_conversation: ReadConversation) -> SessionRows:
    """The projected rows of one source, noted with its version; raises what the store's read raises
    (`StoreError`, `OSError`, a foreign reader's coded error)."""
    conversation = read_conversation(source.session_id)
    return SessionRows(source.session_id, conversation.rows, conversation.through_seq, source.version)


UNREADABLE: Final = (CodedError, OSError, ValueError, UnreachableSurfaceEventError)
"""What reading one source may raise that means "this source cannot be read now" (skipped and
counted). Anything else is a bug and stops the catch-up."""


def changes_of(
    plan: CatchUpPlan,
    read_conversation: ReadConversation,
    report: CatchUpReport,
    *,
    stopped: Callable[[], bool] = lambda: False,
    on_unreadable: Callable[[SourceLike], None] | None = None,
) -> Iterator[SessionChange]:
    """The changes of `plan`, reading each source as the index asks for the next one.

    Removals come first. A source that cannot be read is logged, counted in `report.skipped` and
    given to `on_unreadable`. `stopped()` is asked before each read; once it is true the iteration
    raises `CatchUpStopped` (what was already written stays).
    """
    for session_id in plan.removed:
        report.removed += 1
        yield SessionRemoved(session_id)
    for source in plan.feed:
        if stopped():
            raise CatchUpStopped("the conversation catch-up was stopped")
        try:
            rows = read_rows(source, read_conversation)
        except UNREADABLE as error:
            log.warning("cannot index the conversation of session %r: %s", source.session_id, error)
            report.skipped.append(source.session_id)
            if on_unreadable is not None:
                on_unreadable(source)
            continue
        report.fed += 1
        yield rows
        time.sleep(0)  # let a UI thread have the interpreter between two logs (parsing holds the GIL)


class CatchUpStopped(Exception):
    """Raised inside a catch-up that was asked to stop (the app is closing)."""


def catch_up(
    index: ConversationSearch,
    sources: Sequence[SourceLike],
    read_conversation: ReadConversation,
    *,
    progress: Progress | None = None,
    stopped: Callable[[], bool] = lambda: False,
    known_unreadable: dict[str, str] | None = None,
    on_plan: Callable[[CatchUpPlan], None] | None = None,
) -> CatchUpReport:
    """Bring `index` in step with `sources` (see the module doc); returns what was done.

    `progress(done, total)` is called after each committed batch of a build (not for a small
    catch-up). Unreadable sources are recorded in `known_unreadable` (id → version) when given.
    `on_plan` sees the plan before anything is read. Raises `CatchUpStopped` once `stopped()`
    turns true, and the index's own errors (`TEXT_SEARCH_UNAVAILABLE`).
    """
    plan = plan_catch_up(sources, index.indexed(), known_unreadable=known_unreadable)
    if on_plan is not None:
        on_plan(plan)
    return _apply(
        index,
        plan,
        read_conversation,
        progress=progress if plan.build else None,
        stopped=stopped,
        known_unreadable=known_unreadable,
    )


def refresh(
    index: ConversationSearch,
    sources: Mapping[str, SourceLike | None],
    read_conversation: ReadConversation,
    *,
    known_unreadable: dict[str, str] | None = None,
) -> CatchUpReport:
    """Re-read the given sessions (after they were appended to): `None` means the session is no
    longer listed (it is removed). Sessions whose version the index already holds are skipped."""
    indexed = index.indexed(sources)
    listed = [source for source in sources.values() if source is not None]
    gone: Collection[str] = [session_id for session_id, source in sources.items() if source is None]
    plan = plan_catch_up(listed, indexed, known_unreadable=known_unreadable)
    plan = CatchUpPlan(plan.feed, tuple(session_id for session_id in gone if session_id in indexed), False)
    return _apply(index, plan, read_conversation, known_unreadable=known_unreadable)


def _apply(
    index: ConversationSearch,
    plan: CatchUpPlan,
    read_conversation: ReadConversation,
    *,
    progress: Progress | None = None,
    stopped: Callable[[], bool] = lambda: False,
    known_unreadable: dict[str, str] | None,
) -> CatchUpReport:
    """Feed `plan` to `index` (bulk when it is a build); unreadable sources go to `known_unreadable`."""
    report = CatchUpReport(build=plan.build)
    if not plan.total:
        return report

    def remember(source: SourceLike) -> None:
        if known_unreadable is not None:
            known_unreadable[source.session_id] = source.version

    changes = changes_of(plan, read_conversation, report, stopped=stopped, on_unreadable=remember)
    done = index.update(changes, progress=progress, total=plan.total, bulk=plan.build)
    report.inserted, report.deleted = done.inserted, done.deleted
    return report
