"""What the workspace needs of its store and its model: the typed seams of `Workspace`.

`WorkspaceStore` is every store call the host and the UIs make (`sessionref.store.SessionStore`
implements it): what the agent needs (`AgentStore`), what the reference service reads
(`SessionQuery`), and the session-level calls of the workspace and the UIs. The model is a
`sessionref.models.ChatModel`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any, Protocol

from sessionref.agent.ports import AgentStore
from sessionref.models.base import ChatModel
from sessionref.service.protocols import Progress, SessionQuery, SessionRecord
from sessionref.store.foreign_catalog import SourceCount
from sessionref.store.logfile import LogReport

__all__ = ["ChatModel", "WorkspaceStore"]


class WorkspaceStore(AgentStore, SessionQuery, Protocol):
    """The store calls of the host and the UIs (`SessionStore` fits)."""

    @property
    def root(self) -> Path:
        """The store's root folder."""
        ...

    @property
    def caught_up(self) -> bool:
        """Whether the store has caught up with what other programs wrote since it opened."""
        ...

    def create_session(
        self, *, cwd: str | None, session_id: str | None = None, created_at: int | None = None
    ) -> SessionRecord:
        """Create a session now (blocking); returns its record."""
        ...

    def title(self, session_id: str) -> str | None:
        """The current title from the index (None: untitled)."""
        ...

    def rename(self, session_id: str, title: str, *, time_ms: int | None = None) -> None:
        """Append a `session/title` to the session (blocking: run it with `on_lane`)."""
        ...

    def read_log_report(self, session_id: str) -> LogReport:
        """The session's header, readable events and the lines skipped as unreadable (blocking)."""
        ...

    def subscribe(self, listener: Callable[[str, list[dict[str, Any]]], None]) -> Callable[[], None]:
        """Call `listener(session_id, events)` after every append; returns the unsubscribe."""
        ...

    def refresh(self, progress: Progress | None = None) -> bool:
        """Catch up with what other programs wrote (a walk over the logs, blocking); whether it found any."""
        ...

    def refresh_changed(self, paths: Collection[Path]) -> bool:
        """`refresh` narrowed to the folders holding `paths` (a file watch's report); whether it found any."""
        ...

    def recent_files(self, limit: int) -> list[str]:
        """The files of the `limit` most recently active sessions (live discovery probes them)."""
        ...

    def sources(self) -> list[SourceCount]:
        """The other agents' sources the store reads (their roots are watched while a UI runs)."""
        ...

    def close(self) -> None:
        """Close the store (idempotent)."""
        ...
