"""How the conversation index reaches its store.

What it needs of the store (`ConversationStore`: plain calls its worker thread makes, where no
event loop runs) and where its file lives beside the store's discovery index (`text_index_path`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from sessionref.service.conversation_rows import SessionConversation
from sessionref.service.protocols import SessionRecord
from sessionref.store.cache_file import is_in_memory
from sessionref.store.index import index_path_for
from sessionref.textsearch.catch_up import SourceLike
from sessionref.textsearch.schema import TEXT_INDEX_FILE_NAME


class ConversationStore(Protocol):
    """What the index needs from the store (`sessionref.store.SessionStore` fits)."""

    @property
    def root(self) -> Path: ...
    def conversation_sources(self) -> Sequence[SourceLike]: ...
    def conversation_source(self, session_id: str) -> SourceLike | None: ...
    def read_conversation(self, session_id: str) -> SessionConversation: ...
    def records_with_titles(
        self, session_ids: Iterable[str]
    ) -> Mapping[str, tuple[SessionRecord, str | None]]: ...
    def subscribe(self, listener: Callable[[str, list[dict[str, Any]]], None]) -> Callable[[], None]: ...


def text_index_path(root: Path) -> Path:
    """Where the conversation index of the store at `root` lives: beside its discovery index (in the
    store root, or in the user cache folder when the root is read-only)."""
    discovery = index_path_for(root)
    if is_in_memory(discovery):  # no cache folder: in memory beside it
        return Path(f"{discovery}-text")
    if discovery.parent == root:
        return root / TEXT_INDEX_FILE_NAME
    return discovery.with_name(f"{discovery.stem}-text.sqlite")
