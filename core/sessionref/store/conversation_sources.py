"""What the conversation index reads of the store: each listed session's source, and its conversation.

The index's worker thread calls these synchronously (it runs no event loop). Listing never reads
a log; `read_conversation` reads one, with the fast reader of `conversation_log` for a log of
this store and through its reader for another agent's session.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from sessionref.service.conversation_rows import SessionConversation, conversation_rows
from sessionref.store.access import fold_report
from sessionref.store.conversation_log import read_log_conversation
from sessionref.store.errors import StoreError
from sessionref.store.foreign_access import foreign_surface_report
from sessionref.store.scan import LogState
from sessionref.store.store_state import StoreState


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


class ConversationSources:
    """What the conversation index reads of `store`: where each session is, and its conversation."""

    def __init__(self, store: StoreState) -> None:
        self._store = store

    def conversation_sources(self) -> list[ConversationSource]:
        """Where each listed session's conversation can be read, with a cheap version of it.

        For the conversation-search catch-up: a source whose `version` changed since it was last
        indexed must be read again. Never reads a log. Foreign sessions have their source kind
        (`claude-code`, `codex`, `gemini`), their first file as `path`, and are read through
        `read_surface`.
        """

        def sources() -> list[ConversationSource]:
            by_id = self._store.catalog.by_id
            found = [self._conversation_source(session_id, state) for session_id, state in by_id.items()]
            found.extend(
                ConversationSource(session_id, entry.kind, entry.paths[0], entry.version, entry.updated_at)
                for session_id, entry in self._store.catalog.foreign.items()
            )
            return found

        return self._store.with_lock(sources)

    def conversation_source(self, session_id: str) -> ConversationSource | None:
        """`conversation_sources()` for one session (None when it is not listed); never reads a log.

        For keeping the conversation index current after an append without listing every session.
        """
        with self._store.lock:
            self._store.check_open()
            state = self._store.catalog.by_id.get(session_id)
            if state is not None:
                return self._conversation_source(session_id, state)
            entry = self._store.catalog.foreign.get(session_id)
            if entry is None:
                return None
            return ConversationSource(session_id, entry.kind, entry.paths[0], entry.version, entry.updated_at)

    def read_conversation(self, session_id: str) -> SessionConversation:
        """The projected rows of one session (`conversation_rows` of its surface), read in this thread.

        A log is read with the fast reader; one it refuses (a line that is not JSON, say) is read
        again in full, skipping unreadable lines as every other reader of a log does, so one bad
        line never hides the rest of a session. Raises `StoreError` (`STORE_SESSION_NOT_FOUND`,
        `STORE_INVALID_LOG`), `OSError`, or a foreign reader's coded error.
        """
        entry = self._store.foreign_entry(session_id)
        if entry is not None:
            surface = foreign_surface_report(entry).snapshot
        else:
            state = self._store.log_state(session_id)
            try:
                conversation = read_log_conversation(Path(self._store.root_text, state.path))
            except StoreError:
                conversation = None
            if conversation is not None and conversation.header.get("id") == session_id:
                return conversation
            surface = fold_report(self._store.report(session_id)).snapshot
        return SessionConversation(
            dict(surface["session"]), conversation_rows(surface), surface.get("capturedThroughSeq")
        )

    def _conversation_source(self, session_id: str, state: LogState) -> ConversationSource:
        return ConversationSource(
            session_id,
            "log",
            os.path.join(self._store.root_text, state.path),
            f"{state.size}:{state.mtime_ns}",
            state.updated_at,
        )
