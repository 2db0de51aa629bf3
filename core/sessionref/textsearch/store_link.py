"""How the conversation index reaches its store.

What it needs of the store (`ConversationStore`), where its file lives beside the store's
discovery index (`text_index_path`), and how its worker thread, where no event loop runs, calls
the store's coroutines (`BlockingCalls`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

from sessionref.service.protocols import SessionRecord, SurfaceSnapshot
from sessionref.store.index import index_path_for
from sessionref.textsearch.catch_up import SourceLike
from sessionref.textsearch.schema import TEXT_INDEX_FILE_NAME

T = TypeVar("T")


class ConversationStore(Protocol):
    """What the index needs from the store (`sessionref.store.SessionStore` fits)."""

    @property
    def root(self) -> Path: ...
    async def conversation_sources(self) -> Sequence[SourceLike]: ...
    def conversation_source(self, session_id: str) -> SourceLike | None: ...
    async def read_surface(self, session_id: str) -> SurfaceSnapshot: ...
    def records_with_titles(
        self, session_ids: Iterable[str]
    ) -> Mapping[str, tuple[SessionRecord, str | None]]: ...
    def subscribe(self, listener: Callable[[str, list[dict[str, Any]]], None]) -> Callable[[], None]: ...


def text_index_path(root: Path) -> Path:
    """Where the conversation index of the store at `root` lives: beside its discovery index (in the
    store root, or in the user cache folder when the root is read-only)."""
    discovery = index_path_for(root)
    if discovery.parent == root:
        return root / TEXT_INDEX_FILE_NAME
    return discovery.with_name(f"{discovery.stem}-text.sqlite")


class BlockingCalls:
    """Runs the store's coroutines to completion from a worker thread (a private event loop, made
    on first use)."""

    def __init__(self) -> None:
        self._runner: asyncio.Runner | None = None

    def run(self, work: Awaitable[T]) -> T:
        """Await `work` on this thread's private loop and return its result."""
        if self._runner is None:
            self._runner = asyncio.Runner()
        return self._runner.run(_awaited(work))

    def close(self) -> None:
        """Close the private loop (if one was made)."""
        if self._runner is not None:
            self._runner.close()


async def _awaited(work: Awaitable[T]) -> T:
    return await work
