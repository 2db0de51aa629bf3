"""`MentionSource`: the `@` lookups of the session a UI shows, handed out by `Workspace.mention_source`.

One typed source per target for both UIs (the app's composer, the line mode's completer): the
candidates of the first group, the conversation matches of the second ("said in conversation"),
the preview of a candidate and the context of a match, each seen from the target of the moment
(the session on screen changes as the user switches). A source made before its workspace is open
(the app paints first, then opens the store in a thread) waits for `ready` itself, so an `@`
typed meanwhile shows the picker's loading state instead of failing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only types: the app makes its source before the first frame, which must stay cheap
    from sessionref.agent import Agent
    from sessionref.host.ui_policy import DraftSession
    from sessionref.host.workspace import Workspace
    from sessionref.service.abort import AbortSignal
    from sessionref.service.candidates import Candidate
    from sessionref.service.conversations import ConversationSearchResult, MessageContext
    from sessionref.service.reference_preview import ReferencePreview

__all__ = ["MentionSource", "MentionTarget"]

MentionTarget = Callable[[], "Agent | DraftSession | None"]
"""The session the lookups are seen from now (None: from the workspace's cwd, leaving nothing out)."""


class MentionSource:
    """Candidates, previews, conversation matches and their context for one UI's target.

    `workspace()` gives the open workspace; with `ready`, every lookup first waits for it (set
    once the workspace is open). A cancelled lookup never reaches the workspace.
    """

    def __init__(
        self,
        workspace: Callable[[], Workspace],
        target: MentionTarget,
        *,
        ready: asyncio.Event | None = None,
    ) -> None:
        self._workspace = workspace
        self._target = target
        self._ready = ready

    async def _open(self) -> Workspace:
        if self._ready is not None:
            await self._ready.wait()
        return self._workspace()

    async def candidates(self, query: str, signal: AbortSignal) -> list[Candidate]:
        """Sessions whose title, id or folder matches `query`, best first, the target left out
        (at most `CandidateLimits.mention`)."""
        workspace = await self._open()
        return await workspace.candidates(self._target(), query, workspace.limits.mention, signal=signal)

    async def prepare(self) -> int:
        """Make the first lookups as quick as later ones (`Workspace.prepare_lookups`, in a thread)."""
        workspace = await self._open()
        return await workspace.prepare_lookups(self._target())

    async def conversations(self, query: str, signal: AbortSignal) -> ConversationSearchResult | None:
        """Sessions where `query` was said, best first, the target left out (at most
        `CandidateLimits.said`); None for a bare `@` (no such group then). Several words are loose
        text: those holding every word first, then those holding most of them."""
        if not query.strip():
            return None
        workspace = await self._open()
        target = self._target()
        return await workspace.references.search_conversations(
            workspace.vantage(target),
            query,
            workspace.limits.said,
            signal=signal,
            question=len(query.split()) > 1,  # several words: loose text (`textsearch.question`)
        )

    def machine_of(self, session_id: str) -> str | None:
        """The machine a listed remote session comes from (None: local, or the workspace not open yet)."""
        if self._ready is not None and not self._ready.is_set():
            return None
        return self._workspace().machine_of(session_id)

    def catalog_note(self) -> str | None:
        """Why the last lookup lacks the catalog's sessions, in one line (None: it has them, or none)."""
        if self._ready is not None and not self._ready.is_set():
            return None
        return self._workspace().catalog_note

    async def preview(self, session_id: str, signal: AbortSignal) -> ReferencePreview:
        """What the target's model would receive from `session_id` under the current budget."""
        workspace = await self._open()
        return await workspace.references.preview(
            workspace.vantage(self._target()), session_id, signal=signal
        )

    async def context(self, session_id: str, seq: int, around: int, signal: AbortSignal) -> MessageContext:
        """Message `seq` of `session_id` with `around` neighbours each side (a match's preview)."""
        workspace = await self._open()
        return await workspace.references.message_context(session_id, seq, around=around, signal=signal)
