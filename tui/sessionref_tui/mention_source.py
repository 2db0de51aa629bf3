"""Connects the composer's `@` lookups to the workspace's reference service for the session on screen."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from sessionref.host.workspace import Workspace
from sessionref.service.abort import AbortSignal


class HasWorkspaceAgent(Protocol):
    """What the adapter reads from the app: the workspace and the agent currently shown."""

    workspace: Workspace

    @property
    def agent(self) -> Any: ...


class WorkspaceMentionSource:
    """The composer's mention source: candidates and previews for the current session (the target)."""

    def __init__(self, host: HasWorkspaceAgent) -> None:
        self._host = host

    async def candidates(self, query: str, signal: AbortSignal) -> Sequence[Any]:
        """Candidates for `query` as the reference service ranks them (the current session excluded)."""
        workspace = self._host.workspace
        return await workspace.candidates(self._host.agent, query, workspace.limits.mention, signal=signal)

    async def preview(self, session_id: str, signal: AbortSignal) -> Any:
        """What the model would receive from `session_id` under the current budget."""
        return await self._host.workspace.references.preview(self._host.agent, session_id, signal=signal)
