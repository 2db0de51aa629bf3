"""What the agent needs from its session store and its chat model, as Protocols.

The agent never imports the store or the models (docs/architecture.md): `sessionref.host` hands
it a `SessionStore` and a `ChatModel`, which satisfy these structurally; tests hand it fakes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, ParamSpec, Protocol, TypeVar

from sessionref.contract.errors import CodedError
from sessionref.service.protocols import SessionRecord, SurfaceSnapshot

P = ParamSpec("P")
T = TypeVar("T")

LogEvent = dict[str, Any]
"""One log event as JSON-shaped data (`type`, `data`, and `seq`/`time` once written)."""


class AgentStore(Protocol):
    """The session store calls the agent makes (implemented by `sessionref.store.SessionStore`)."""

    def record(self, session_id: str) -> SessionRecord:
        """Discovery metadata of a session; raises a `CodedError` for an unknown one."""
        ...

    def is_writable(self, session_id: str) -> bool:
        """Whether appends to this session are allowed."""
        ...

    def write_refusal(self, session_id: str) -> CodedError | None:
        """Why an append would be refused (its message offers the next step), or None."""
        ...

    def on_lane(
        self, session_id: str, call: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs
    ) -> Awaitable[T]:
        """Queue `call(*args, **kwargs)` on the session's ordered writer now; the awaitable gives its result.

        Writes queued one after another land in that order, whether or not each is awaited.
        """
        ...

    def append(self, session_id: str, events: Sequence[LogEvent]) -> list[LogEvent]:
        """Append events durably (a blocking write: run it with `on_lane`); returns them as written."""
        ...

    def read_log(self, session_id: str) -> tuple[dict[str, Any], list[LogEvent]]:
        """The header and the readable events of the session's log (a blocking read)."""
        ...

    async def read_surface(self, session_id: str) -> SurfaceSnapshot:
        """The folded surface of the session."""
        ...

    def write_compaction(self, session_id: str, summary: str) -> LogEvent:
        """Write a compaction checkpoint replacing the whole surface (blocking: run it with `on_lane`)."""
        ...


class AgentModel(Protocol):
    """The chat model calls the agent makes (implemented by `sessionref.models.ChatModel`)."""

    @property
    def provider(self) -> str:
        """Who serves the model (recorded in each assistant message's source)."""
        ...

    @property
    def model(self) -> str:
        """The model's name at its provider."""
        ...

    def stream(self, messages: list[dict[str, Any]]) -> AsyncIterator[str]:
        """The reply to `messages` as text deltas; a failure raises (a `CodedError` names its code)."""
        ...

    async def summarize(self, messages: list[dict[str, Any]]) -> str:
        """A summary of `messages` for a compaction checkpoint."""
        ...
