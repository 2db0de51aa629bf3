"""The catalog beside the local store: one ranked list of local and remote sessions, within a deadline.

`CatalogLink` is what a host builds when a catalog is configured (`open_catalog_link`); without
one nothing of `sessionref.catalog` is imported. It hands the reference service two views that
implement the service's own protocols, so the service never learns there is a catalog:

* `CatalogLink.sessions(store)`, a `MergedSessions` (`SessionQuery` + `CandidateSearch`): the
  `@` completion asks the store and the catalog at once and merges both answers into the
  service's ranking (this folder first: a remote session's cwd counts when its folder name is
  this folder's; then sessions without a cwd; then recent activity). The store wins a tie and
  lists a session once: the catalog leaves out what this machine published, and an id the store
  has is never listed twice. A session the store does not have is read from the catalog's copy
  when a message is prepared, then captured like any snapshot.
* `CatalogLink.conversations(index)`, a `MergedConversations` (`ConversationQuery`): the store's
  text index and the catalog's full-text search, merged the same way.

The catalog gets `KEYSTROKE_DEADLINE_SECONDS` per keystroke; past it (or when it is down, slow,
restarting or refusing the login) the local answer is returned alone, its query is cancelled,
and `note` says so in one line. Local sessions never wait for more than that.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Final, TypeVar

from sessionref.catalog.conninfo import scrub
from sessionref.catalog.discovery import CatalogSession
from sessionref.catalog.errors import CatalogError
from sessionref.catalog.reader import CatalogReader
from sessionref.host.catalog_settings import CatalogSettings
from sessionref.service.candidates import find_candidates, workspace_rank
from sessionref.service.errors import ServiceCode
from sessionref.service.protocols import (
    CandidateSearch,
    ConversationMatch,
    ConversationQuery,
    ConversationRequest,
    ConversationSearchResult,
    SessionQuery,
    SessionRecord,
    SurfaceSnapshot,
)

KEYSTROKE_DEADLINE_SECONDS: Final = 0.150
"""How long a keystroke waits for the catalog before it shows local results alone (docs/catalog.md)."""
LOOKUP_DEADLINE_SECONDS: Final = 5.0
"""How long a one-off lookup (resolving an id, listing for a script) waits for the catalog."""
LATE_NOTE: Final = "the catalog did not answer within {ms} ms: local sessions only"
DOWN_NOTE: Final = "the catalog is not available ({code}): local sessions only"

T = TypeVar("T")


class CatalogLink:
    """The catalog reader of this host and the merged views over it; `note` is the last answer's note."""

    def __init__(
        self, reader: CatalogReader, *, deadline: float = KEYSTROKE_DEADLINE_SECONDS, conninfo: str = ""
    ) -> None:
        self.reader = reader
        self.deadline = deadline
        self.conninfo = conninfo
        self.note: str | None = None
        """One line saying the last answer lacks the catalog's sessions, and why (None: it has them)."""
        self.machines: dict[str, str] = {}
        """The machine of every remote session listed so far (a UI marks remote rows with it)."""
        self.remote_ids: set[str] = set()
        """Every session id the catalog answered with so far (their titles are the catalog's)."""
        self._executor = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="catalog")

    def machine_of(self, session_id: str) -> str | None:
        """The machine a listed remote session comes from, or None for a local (or unlisted) one."""
        return self.machines.get(session_id)

    def sessions(self, local: SessionQuery) -> MergedSessions:
        """The store `local` and the catalog as one `SessionQuery` + `CandidateSearch`."""
        return MergedSessions(local, self)

    def conversations(self, local: ConversationQuery | None) -> MergedConversations:
        """The store's text index `local` (None: none) and the catalog's search as one `ConversationQuery`."""
        return MergedConversations(local, self)

    def _failed(self, error: BaseException) -> None:
        code = getattr(error, "code", type(error).__name__)
        self.note = scrub(DOWN_NOTE.format(code=code), self.conninfo)

    def _late(self) -> None:
        self.note = LATE_NOTE.format(ms=round(self.deadline * 1000))
        # Its own short thread: the link's workers may all be waiting for the query being cancelled.
        threading.Thread(target=self.reader.cancel, name="catalog-cancel", daemon=True).start()

    def submit(self, work: Callable[[], T]) -> concurrent.futures.Future[T]:
        """Start `work()` in one of the link's worker threads."""
        return self._executor.submit(work)

    def wait(self, future: concurrent.futures.Future[T], default: T, *, deadline: float | None = None) -> T:
        """`future`'s result, waiting at most the deadline; `default` (and a note) past it or on failure."""
        try:
            result = future.result(timeout=self.deadline if deadline is None else deadline)
        except concurrent.futures.TimeoutError:
            self._late()
            return default
        except CatalogError as error:
            self._failed(error)
            return default
        self.note = None
        return result

    async def call_async(self, work: Callable[[], T], default: T, *, deadline: float | None = None) -> T:
        """`call` for an event loop: never blocks it, never waits past the deadline."""
        loop = asyncio.get_running_loop()
        future = asyncio.wrap_future(self.submit(work), loop=loop)
        try:
            result = await asyncio.wait_for(
                asyncio.shield(future), self.deadline if deadline is None else deadline
            )
        except TimeoutError:
            future.add_done_callback(_ignore_outcome)
            self._late()
            return default
        except CatalogError as error:
            self._failed(error)
            return default
        self.note = None
        return result

    def close(self) -> None:
        """Stop waiting for the catalog and close its connection."""
        self.reader.cancel()
        self._executor.shutdown(wait=False, cancel_futures=True)
        self.reader.close()


def _ignore_outcome(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()  # retrieved: a late failure is not "never retrieved"


def _merged(local: Sequence[tuple[int, int, T]], remote: Sequence[tuple[int, int, T]], limit: int) -> list[T]:
    """Two lists of `(rank, last activity, item)`, each already ranked, as one: rank, then recency;
    the local item first on a tie."""
    tagged = [(rank, -activity, 0, index, item) for index, (rank, activity, item) in enumerate(local)]
    tagged += [(rank, -activity, 1, index, item) for index, (rank, activity, item) in enumerate(remote)]
    tagged.sort(key=lambda entry: entry[:4])
    return [entry[4] for entry in tagged[:limit]]


class MergedSessions:
    """The store and the catalog as one `SessionQuery` with the `CandidateSearch` fast path."""

    def __init__(self, local: SessionQuery, link: CatalogLink) -> None:
        self.local = local
        self.link = link

    async def search_candidates(
        self, *, exclude_id: str, target_cwd: str | None, needle: str, limit: int
    ) -> Sequence[tuple[SessionRecord, str]]:
        """The store's and the catalog's candidates as one ranked list (see the module docstring)."""
        reader = self.link.reader
        nothing: list[CatalogSession] = []
        remote_call = asyncio.ensure_future(
            self.link.call_async(
                lambda: reader.find(needle=needle, cwd=target_cwd, exclude_id=exclude_id, limit=limit),
                nothing,
            )
        )
        local = await self._local_candidates(exclude_id, target_cwd, needle, limit)
        remote = await remote_call
        known = {record.id for record, _ in local}
        for session in remote:
            self.link.machines[session.id] = session.machine
            self.link.remote_ids.add(session.id)
        local_ranked = [
            (workspace_rank(record.cwd, target_cwd), record.last_activity, (record, label))
            for record, label in local
        ]
        remote_ranked = [
            (
                session.rank,
                session.updated_at,
                (
                    SessionRecord(session.id, session.created_at, session.cwd, session.updated_at),
                    session.title or session.id,
                ),
            )
            for session in remote
            if session.id not in known
        ]
        return _merged(local_ranked, remote_ranked, limit)

    async def _local_candidates(
        self, exclude_id: str, target_cwd: str | None, needle: str, limit: int
    ) -> Sequence[tuple[SessionRecord, str]]:
        if isinstance(self.local, CandidateSearch):
            return await self.local.search_candidates(
                exclude_id=exclude_id, target_cwd=target_cwd, needle=needle, limit=limit
            )
        found = await find_candidates(
            self.local, agent_id=exclude_id, agent_cwd=target_cwd, text=needle, limit=limit
        )
        return [
            (SessionRecord(item.session_id, item.created_at, item.cwd, item.updated_at), item.label)
            for item in found
        ]

    async def list_sessions(self) -> Sequence[SessionRecord]:
        """The store's sessions and the catalog's newest ones, most recent first, each id once."""
        nothing: list[SessionRecord] = []
        remote_call = asyncio.ensure_future(
            self.link.call_async(self.link.reader.listing, nothing, deadline=LOOKUP_DEADLINE_SECONDS)
        )
        local = list(await self.local.list_sessions())
        remote = await remote_call
        known = {record.id for record in local}
        merged = local + [record for record in remote if record.id not in known]
        return sorted(merged, key=lambda record: (-record.last_activity, record.id))

    async def read_surface(self, session_id: str) -> SurfaceSnapshot:
        """The store's surface of `session_id`; for a session it does not have, the catalog's copy."""
        try:
            return await self.local.read_surface(session_id)
        except Exception as error:
            if getattr(error, "code", None) != ServiceCode.SESSION_NOT_FOUND:
                raise
            try:
                return await self.link.reader.read_surface(session_id)
            except CatalogError:
                raise error from None

    async def read_titles(self, session_ids: Sequence[str]) -> Mapping[str, str | None]:
        """Titles from the store; for the remote sessions among them, from the catalog."""
        titles = dict(await self.local.read_titles(session_ids))
        missing = [session_id for session_id in session_ids if titles.get(session_id) is None]
        remote_ids = [session_id for session_id in missing if session_id in self.link.remote_ids]
        if remote_ids:
            reader = self.link.reader
            unknown: dict[str, str | None] = {}
            found = await self.link.call_async(lambda: reader.titles(remote_ids), unknown)
            titles.update({key: value for key, value in found.items() if value is not None})
        return titles


class MergedConversations:
    """The store's text index and the catalog's full-text search as one `ConversationQuery`."""

    def __init__(self, local: ConversationQuery | None, link: CatalogLink) -> None:
        self.local = local
        self.link = link

    def search_conversations(
        self, request: ConversationRequest, *, cancel: threading.Event
    ) -> ConversationSearchResult:
        """Local matches and the catalog's, interleaved by each list's own rank, then folder, then recency.

        The two backends' relevance scores are not comparable, so neither list is re-scored: the
        n-th best of each come before the (n+1)-th of either.
        """
        reader = self.link.reader
        started = time.monotonic()
        remote_future = self.link.submit(lambda: reader.search_conversations(request, cancel=cancel))
        if self.local is not None:
            local = self.local.search_conversations(request, cancel=cancel)
        else:
            local = ConversationSearchResult(status="off")
        remaining = max(0.0, self.link.deadline - (time.monotonic() - started))
        remote = self.link.wait(
            remote_future, ConversationSearchResult(status="unavailable"), deadline=remaining
        )
        self.link.remote_ids.update(match.session_id for match in remote.matches)
        if remote.status != "ok" or not remote.matches:
            return local
        known = {match.session_id for match in local.matches}
        entries = [
            *(
                (index, not match.same_workspace, -match.last_activity, 0, match)
                for index, match in enumerate(local.matches)
            ),
            *(
                (index, not match.same_workspace, -match.last_activity, 1, match)
                for index, match in enumerate(remote.matches)
                if match.session_id not in known
            ),
        ]
        entries.sort(key=lambda entry: entry[:4])
        chosen: tuple[ConversationMatch, ...] = tuple(entry[4] for entry in entries[: request.limit])
        return replace(
            local,
            matches=chosen,
            status="ok",
            pending=local.pending or remote.pending,
            complete=local.complete and remote.complete,
        )


def open_catalog_link(
    settings: CatalogSettings, *, deadline: float = KEYSTROKE_DEADLINE_SECONDS
) -> CatalogLink | None:
    """The catalog link of `settings` (None without a catalog); connects on first use, not now."""
    if settings.url is None:
        return None
    conninfo = settings.url.get_secret_value()
    return CatalogLink(
        CatalogReader(conninfo, machine=settings.machine_name), deadline=deadline, conninfo=conninfo
    )
