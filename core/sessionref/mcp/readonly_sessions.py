"""`ReadOnlySessions`: what the MCP server's tools, resources and prompts read, and nothing else.

It opens the store (and its conversation index) lazily, at the first request that needs it, so
`initialize` never waits for a catch-up; afterwards it catches both up with other programs in
the background at most every `REFRESH_SECONDS`, never making a request wait for that. Every
answer comes from the functions the CLI uses, so an agent sees what a person sees:

* listing: `SessionReferences.list_candidates` (what `sessionref sessions` and `@` completion
  rank with), minus the caller's live session (`live_sessions`);
* search: `SessionReferences.search_conversations` in question mode (`textsearch/question.py`);
* snapshot: `host.snapshot.prepare_snapshot` (what `sessionref snapshot` prints);
* ids: `service.session_ids.resolve_session_text` (id, unique prefix, URI or mention token).

It writes nothing but the store's own index files, as the CLI does (docs/mcp.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from sessionref.mcp import limits
from sessionref.mcp.errors import MCP_QUERY_TOO_LONG, MCP_SEARCH_UNAVAILABLE, McpError
from sessionref.mcp.live_sessions import LiveSessionRule
from sessionref.service.abort import AbortSignal
from sessionref.service.vantage import Vantage

if TYPE_CHECKING:
    from sessionref.host.settings import Settings
    from sessionref.host.snapshot import Snapshot
    from sessionref.service.candidates import Candidate
    from sessionref.service.conversations import ConversationMatch
    from sessionref.store import SessionStore
    from sessionref.store.foreign_state import ForeignRoot
    from sessionref.textsearch.store_index import StoreConversationIndex

log = logging.getLogger(__name__)

REFRESH_SECONDS: Final = 60.0
"""A request arriving this long after the last catch-up starts another one in the background.

As `sessionref sessions`' `INDEX_MAX_AGE_SECONDS`: a catch-up walks every log (seconds of CPU at
100,000 sessions, competing with the answers on 2 cores), so a session another program created
shows up to a minute late; reads of a session by id always read its log as it is now."""


@dataclass(frozen=True, slots=True)
class SessionPage:
    """One page of a listing: its sessions (best first) and the offset of the next page, if any."""

    sessions: tuple[Candidate, ...]
    next_offset: int | None


@dataclass(frozen=True, slots=True)
class ProjectedMessage:
    """One message of a session's conversation as an agent gets it (`text` cut to `MESSAGE_CHARS`)."""

    seq: int
    role: str
    checkpoint: bool
    text: str
    cut: bool


@dataclass(frozen=True, slots=True)
class MessageWindow:
    """Messages around one seq of a session, and where the conversation goes on on each side."""

    session_id: str
    title: str
    total: int
    messages: tuple[ProjectedMessage, ...]
    earlier_seq: int | None
    later_seq: int | None


def checked_text(text: str, what: str) -> str:
    """`text` if it is at most `MAX_QUERY_CHARS` long, else `MCP_QUERY_TOO_LONG`."""
    if len(text) > limits.MAX_QUERY_CHARS:
        raise McpError(
            MCP_QUERY_TOO_LONG, f"{what} is {len(text):,} characters long; at most {limits.MAX_QUERY_CHARS:,}"
        )
    return text


class ReadOnlySessions:
    """Every session of one store and its sources, read-only, as one caller in `cwd` sees them."""

    def __init__(
        self,
        store_root: Path,
        settings: Settings,
        *,
        sources: Sequence[ForeignRoot] = (),
        cwd: str | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store_root = store_root
        self.settings = settings
        self.cwd = cwd
        self._sources = tuple(sources)
        self._clock = clock
        self._store: SessionStore | None = None
        self._conversations: StoreConversationIndex | None = None
        self._opening = asyncio.Lock()
        self._indexing = asyncio.Lock()
        self._caught_up_at = 0.0
        self._refreshing: asyncio.Task[None] | None = None
        self._default_budget: int | None = None

    # -- lifecycle -----------------------------------------------------------------------------

    async def store(self) -> SessionStore:
        """The store, opened (and caught up) at the first call; later calls may start a catch-up."""
        async with self._opening:
            if self._store is None:
                from sessionref.store import open_store

                self._store = await asyncio.to_thread(open_store, self.store_root, sources=self._sources)
                self._caught_up_at = time.monotonic()
            elif time.monotonic() - self._caught_up_at >= REFRESH_SECONDS and self._refreshing is None:
                self._caught_up_at = time.monotonic()
                self._refreshing = asyncio.ensure_future(self._refresh(self._store))
            return self._store

    async def _refresh(self, store: SessionStore) -> None:
        """Catch the store up with other programs, then the conversation index with the store."""
        try:
            await asyncio.to_thread(store.refresh)
            if self._conversations is not None:
                self._conversations.request_catch_up()
        except Exception as error:  # a failed catch-up leaves the last answer in place
            log.warning("cannot catch up with the store: %s", error)
        finally:
            self._refreshing = None

    async def conversations(self) -> StoreConversationIndex:
        """The conversation index, opened and caught up with the store at the first call."""
        store = await self.store()
        async with self._indexing:
            if self._conversations is None:
                from sessionref.textsearch.store_index import StoreConversationIndex

                index = StoreConversationIndex(store, verify=False)
                try:
                    await asyncio.to_thread(index.catch_up_now)
                except Exception:
                    index.close()
                    raise
                self._conversations = index
            return self._conversations

    async def close(self) -> None:
        """Stop a running catch-up's follow-up, close the index and the store (idempotent)."""
        if self._refreshing is not None:
            with contextlib.suppress(BaseException):
                await self._refreshing
        if self._conversations is not None:
            await asyncio.to_thread(self._conversations.close)
            self._conversations = None
        if self._store is not None:
            await asyncio.to_thread(self._store.close)
            self._store = None

    # -- what the tools read -------------------------------------------------------------------

    def _rule(self, excluded: Collection[str]) -> LiveSessionRule:
        return LiveSessionRule(self._clock() * 1000, frozenset(excluded))

    async def resolve(self, text: str) -> str:
        """The id of the one session `text` names (id, unique prefix, URI or mention token)."""
        from sessionref.service.session_ids import resolve_session_id, session_id_in_text

        store = await self.store()
        named = session_id_in_text(checked_text(text, "the session"))
        if named and store.records_with_titles([named]):
            return named  # an exact id: one index lookup, not a scan of every id (40 ms at 100,000)
        return await resolve_session_id(store, named)

    async def resolve_all(self, texts: Sequence[str]) -> list[str]:
        """`resolve` for each of `texts` (an `exclude` argument); unknown ones are left out."""
        from sessionref.contract.errors import CodedError

        found: list[str] = []
        for text in texts[: limits.MAX_EXCLUDE]:
            try:
                found.append(await self.resolve(text))
            except CodedError:
                continue  # excluding a session that is not there excludes nothing
        return found

    async def page(self, query: str, offset: int, limit: int, excluded: Collection[str] = ()) -> SessionPage:
        """Sessions `offset` to `offset + limit` ranked like `sessionref sessions QUERY` (this folder
        first, then the most recently active), the caller's live session left out."""
        from sessionref.service.references import SessionReferences

        references = SessionReferences(await self.store())
        rule = self._rule(excluded)
        wanted = offset + limit + 1
        asked = wanted + len(excluded) + 8
        while True:
            found = await references.list_candidates(
                Vantage("", self.cwd), checked_text(query, "the query"), asked
            )
            shown = [c for c in found if not rule.hides(c.session_id, c.same_workspace, c.last_activity)]
            if len(shown) >= wanted or len(found) < asked:
                break
            asked *= 2
        chosen = tuple(shown[offset : offset + limit])
        return SessionPage(chosen, offset + limit if len(shown) > offset + limit else None)

    async def search(
        self, question: str, limit: int, excluded: Collection[str] = ()
    ) -> tuple[list[ConversationMatch], bool]:
        """(sessions whose conversation answers `question`, best first; whether all matching
        messages were examined). `MCP_SEARCH_UNAVAILABLE` while the index cannot answer."""
        from sessionref.service.references import SessionReferences

        text = checked_text(question, "the query")
        references = SessionReferences(await self.store(), conversations=await self.conversations())
        signal = AbortSignal()
        rule = self._rule(excluded)
        try:
            found = await references.search_conversations(
                # A whole question: its last word is finished, not a prefix being typed.
                Vantage("", self.cwd),
                text + " ",
                limit + len(excluded) + 8,
                signal=signal,
                question=True,
            )
        except asyncio.CancelledError:
            signal.abort("cancelled by the client")
            raise
        if found.status in ("indexing", "unavailable", "off"):
            raise McpError(MCP_SEARCH_UNAVAILABLE, found.note or "the conversation index cannot be searched")
        shown = [m for m in found.matches if not rule.hides(m.session_id, m.same_workspace, m.last_activity)]
        return shown[:limit], found.complete

    async def snapshot(self, session: str, max_bytes: int | None) -> Snapshot:
        """The context message `sessionref snapshot ID --max-bytes N` prints for `session`.

        `max_bytes` is clamped to `SNAPSHOT_MIN_BYTES`..`SNAPSHOT_MAX_BYTES`; without it the
        configured budget applies, clamped the same way. A text over `RESPONSE_MAX_BYTES` (a
        session of many `<`, each written as six bytes) is prepared again with half the budget.
        """
        from sessionref.host.snapshot import prepare_snapshot

        store = await self.store()
        session_id = await self.resolve(session)
        budget = limits.clamp(
            max_bytes if max_bytes is not None else await self._configured_budget(),
            limits.SNAPSHOT_MAX_BYTES,
            limits.SNAPSHOT_MAX_BYTES,
            limits.SNAPSHOT_MIN_BYTES,
        )
        while True:
            prepared = await prepare_snapshot(store, self.settings, session_id, max_bytes=budget)
            if (
                len(prepared.text.encode()) <= limits.RESPONSE_MAX_BYTES
                or budget <= limits.SNAPSHOT_MIN_BYTES
            ):
                return prepared
            budget = max(limits.SNAPSHOT_MIN_BYTES, budget // 2)

    async def _configured_budget(self) -> int:
        if self._default_budget is None:
            from sessionref.host.model_choice import build_model
            from sessionref.service.references import SessionReferences

            window = build_model(self.settings).context_window
            references = SessionReferences(
                await self.store(), self.settings.references, context_window=window
            )
            self._default_budget = await references.resolve_budget()
        return self._default_budget

    async def messages(self, session: str, around_seq: int | None, before: int, after: int) -> MessageWindow:
        """Up to `before` messages before `around_seq` (default: after the last one), the message
        at it (or the first after it), and up to `after` after that: user, assistant and
        checkpoints only, each text cut to `MESSAGE_CHARS`."""
        from sessionref.service.conversations import projected_with_seqs

        store = await self.store()
        session_id = await self.resolve(session)
        surface = await store.read_surface(session_id)
        items = await asyncio.to_thread(projected_with_seqs, surface)
        seqs = [item[0] for item in items]
        if around_seq is None:
            middle = len(items)
        else:
            middle = next((index for index, seq in enumerate(seqs) if seq >= around_seq), len(items))
        low, high = max(0, middle - before), min(len(items), middle + after + 1)
        if around_seq is None:
            high = len(items)
        chosen = tuple(
            ProjectedMessage(
                seq, role, checkpoint, text[: limits.MESSAGE_CHARS], len(text) > limits.MESSAGE_CHARS
            )
            for seq, role, checkpoint, text in items[low:high]
        )
        return MessageWindow(
            session_id,
            store.title(session_id) or session_id,
            len(items),
            chosen,
            seqs[low - 1] if low > 0 else None,
            seqs[high] if high < len(items) else None,
        )
