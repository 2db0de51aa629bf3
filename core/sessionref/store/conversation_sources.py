"""Where conversation search reads each listed session (`ConversationSource`), from the index."""

from __future__ import annotations

import os
from dataclasses import dataclass

from sessionref.store.scan import LogState
from sessionref.store.store_base import StoreBase


@dataclass(frozen=True, slots=True)
class ConversationSource:
    """One session as conversation search sees it.

    `kind` is `"log"` for a session log under the store root (its `path`, read with the fast
    projection reader); other kinds are read through `read_surface`. `version` changes whenever
    the file does (size and modification time); `last_activity` is epoch milliseconds.
    """

    session_id: str
    kind: str
    path: str
    version: str
    last_activity: int


class ConversationSources(StoreBase):
    """The store's answers to the conversation index's catch-up; never reads a log."""

    async def conversation_sources(self) -> list[ConversationSource]:
        """Where each listed session's conversation can be read, with a cheap version of it.

        For the conversation-search catch-up: a source whose `version` changed since it was last
        indexed must be read again. Never reads a log. Foreign sessions have their source kind
        (`claude-code`, `codex`, `gemini`), their first file as `path`, and are read through
        `read_surface`.
        """

        def sources() -> list[ConversationSource]:
            by_id = self._catalog.by_id
            found = [self._conversation_source(session_id, state) for session_id, state in by_id.items()]
            found.extend(
                ConversationSource(session_id, entry.kind, entry.paths[0], entry.version, entry.updated_at)
                for session_id, entry in self._catalog.foreign.items()
            )
            return found

        return await self._locked(sources)

    def conversation_source(self, session_id: str) -> ConversationSource | None:
        """`conversation_sources()` for one session (None when it is not listed); never reads a log.

        For keeping the conversation index current after an append without listing every session.
        """
        with self._lock:
            self._check_open()
            state = self._catalog.by_id.get(session_id)
            if state is not None:
                return self._conversation_source(session_id, state)
            entry = self._catalog.foreign.get(session_id)
            if entry is None:
                return None
            return ConversationSource(session_id, entry.kind, entry.paths[0], entry.version, entry.updated_at)

    def _conversation_source(self, session_id: str, state: LogState) -> ConversationSource:
        return ConversationSource(
            session_id,
            "log",
            os.path.join(self._root_text, state.path),
            f"{state.size}:{state.mtime_ns}",
            state.updated_at,
        )
