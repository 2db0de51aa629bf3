"""Connects the composer's `@` lookups to the workspace's reference service for the session on screen."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from sessionref.service.abort import AbortSignal

from sessionref_tui.widgets.reference_preview import CONTEXT_AROUND

if TYPE_CHECKING:
    from sessionref.host.workspace import Workspace


class HasWorkspaceAgent(Protocol):
    """What the adapter reads from the app: the workspace and the agent currently shown."""

    @property
    def workspace(self) -> Workspace: ...

    @property
    def agent(self) -> Any: ...


class WorkspaceMentionSource:
    """The composer's mention source: candidates, previews and conversation matches for the current
    session (the target)."""

    def __init__(self, host: HasWorkspaceAgent) -> None:
        self._host = host

    async def candidates(self, query: str, signal: AbortSignal) -> Sequence[Any]:
        """Candidates for `query` as the reference service ranks them (the current session excluded)."""
        workspace = self._host.workspace
        return await workspace.candidates(self._host.agent, query, workspace.limits.mention, signal=signal)

    async def preview(self, session_id: str, signal: AbortSignal) -> Any:
        """What the model would receive from `session_id` under the current budget."""
        return await self._host.workspace.references.preview(self._host.agent, session_id, signal=signal)

    async def conversations(self, query: str, signal: AbortSignal) -> Any:
        """Sessions whose conversation matches `query` (the current session excluded)."""
        return await self._host.workspace.search_conversations(self._host.agent, query, signal=signal)

    async def context(self, session_id: str, seq: int, signal: AbortSignal) -> Any:
        """Message `seq` of `session_id` with its neighbours, for the preview of a conversation match."""
        return await self._host.workspace.references.message_context(
            session_id, seq, around=CONTEXT_AROUND, signal=signal
        )
