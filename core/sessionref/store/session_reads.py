"""`SessionReads`: what the store answers about a session, from the index or by reading its log.

Discovery (`list_sessions`, `read_titles`, `search_candidates`, titles and records) is answered
from the index and never reads a log; `read_surface` reads and folds one log in a worker thread.
No read ever writes. A foreign session (another agent's history) is read through its reader.
Built on a `StoreState` alone.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sessionref.service.protocols import SessionRecord, SurfaceSnapshot
from sessionref.store.access import SurfaceReport, write_target
from sessionref.store.errors import StoreError
from sessionref.store.foreign_access import (
    foreign_header,
    foreign_log_report,
    foreign_refusal,
    foreign_surface_report,
)
from sessionref.store.foreign_state import ForeignEntry, ForeignRoot
from sessionref.store.logfile import LogReport, is_header
from sessionref.store.scan import LogState
from sessionref.store.store_state import StoreState


class SessionReads:
    """Reads of one session and the discovery queries (`SessionQuery`, `CandidateSearch`) of `store`."""

    def __init__(self, store: StoreState) -> None:
        self._store = store

    def read_log(self, session_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Header and readable events (packed chunk rows expanded; unreadable lines skipped)."""
        report = self.read_log_report(session_id)
        return report.header, report.events

    def read_log_report(self, session_id: str) -> LogReport:
        """Header, readable events and the line numbers of skipped unreadable lines (`LogReport`).

        For a foreign session: its header and surface events, as its reader builds them.
        """
        entry = self._store.foreign_entry(session_id)
        if entry is not None:
            return foreign_log_report(entry)
        return self._store.report(session_id)

    def header(self, session_id: str) -> dict[str, Any]:
        """The header line of a session, from the index (from the log if the index row is unusable)."""
        entry = self._store.foreign_entry(session_id)
        if entry is not None:
            return foreign_header(entry)
        state = self._store.log_state(session_id)
        try:
            header: object = json.loads(state.header_json or "")
        except (ValueError, RecursionError):
            header = None
        if not isinstance(header, dict) or not is_header(header) or header.get("id") != session_id:
            return self._store.report(session_id).header
        return header

    def record(self, session_id: str) -> SessionRecord:
        """Discovery metadata of one session (`updated_at`: its last activity)."""
        entry = self._store.foreign_entry(session_id)
        state: LogState | ForeignEntry = entry if entry is not None else self._store.log_state(session_id)
        return SessionRecord(session_id, state.created_at, state.cwd, state.updated_at)

    def title(self, session_id: str) -> str | None:
        """The current title (latest `session/title`, else the fallback title) from the index."""
        entry = self._store.foreign_entry(session_id)
        return entry.title if entry is not None else self._store.log_state(session_id).label_title

    def source_of(self, session_id: str) -> ForeignRoot | None:
        """The other agent's history a listed session comes from, or None for a session of this store."""
        entry = self._store.foreign_entry(session_id)
        if entry is None:
            self._store.log_state(session_id)  # STORE_SESSION_NOT_FOUND for an unknown id
            return None
        return entry.source

    def write_refusal(self, session_id: str) -> StoreError | None:
        """Why an append to this session would be refused (e.g. `STORE_READ_ONLY`), or None if it would not.

        An unknown id raises `STORE_SESSION_NOT_FOUND`; for a listed session this never raises.
        Foreign sessions (Claude Code, Codex CLI, Gemini CLI) are always refused.
        """
        entry = self._store.foreign_entry(session_id)
        if entry is not None:
            return foreign_refusal(entry)
        state = self._store.log_state(session_id)
        try:
            write_target(
                self._store.root_text, state.path, session_id, write_foreign=self._store.write_foreign
            )
        except StoreError as error:
            return error
        return None

    def is_writable(self, session_id: str) -> bool:
        """Whether appends are allowed (False for .zstd logs, other programs' sessions, read-only files)."""
        return self.write_refusal(session_id) is None

    async def list_sessions(self) -> Sequence[SessionRecord]:
        """All sessions, most recent activity first (time of the newest event), ties by id ascending."""
        return await self._store.locked(lambda: list(self._store.catalog.records()))

    async def read_surface(self, session_id: str) -> SurfaceSnapshot:
        """The folded surface of a session; StoreError with a stable code when it cannot be read."""
        return (await self.read_surface_report(session_id)).snapshot

    async def read_surface_report(self, session_id: str) -> SurfaceReport:
        """The folded surface and the log lines that were skipped as unreadable.

        A foreign session is read through its reader (bounded, read-only); the positions of the
        lines it could not use are reported, a last line still being written is not there yet.
        """
        entry = self._store.foreign_entry(session_id)
        if entry is not None:
            return await asyncio.to_thread(foreign_surface_report, entry)
        # Reading and folding are both proportional to the log: neither runs on the event loop.
        return await asyncio.to_thread(self._store.surface, session_id)

    async def read_titles(self, session_ids: Sequence[str]) -> Mapping[str, str | None]:
        """Titles by id from the index (unknown ids map to None); never reads a log."""

        def titles() -> dict[str, str | None]:
            by_id, foreign = self._store.catalog.by_id, self._store.catalog.foreign
            found: dict[str, str | None] = {}
            for session_id in session_ids:
                state = by_id.get(session_id) or foreign.get(session_id)
                found[session_id] = state.label_title if state is not None else None
            return found

        return await self._store.locked(titles)

    async def search_candidates(
        self, *, exclude_id: str, target_cwd: str | None, needle: str, limit: int
    ) -> Sequence[tuple[SessionRecord, str]]:
        """Up to `limit` (record, label) pairs ranked like `list_candidates` (needle already lower-cased)."""
        return await self._store.locked(
            lambda: self._store.catalog.candidates().search(
                exclude_id=exclude_id, target_cwd=target_cwd, needle=needle, limit=limit
            )
        )

    def records_with_titles(self, session_ids: Iterable[str]) -> dict[str, tuple[SessionRecord, str | None]]:
        """`record` and title of each id still listed, under one hold of the lock (unlisted ids are
        left out): what ranks and labels a keystroke's conversation matches (up to a thousand
        sessions at a time), in one call."""
        found: dict[str, tuple[SessionRecord, str | None]] = {}
        with self._store.lock:
            self._store.check_open()
            for session_id in session_ids:
                state: LogState | ForeignEntry | None = self._store.foreign.entry(session_id)
                if state is None:
                    state = self._store.catalog.by_id.get(session_id)
                if state is not None:
                    record = SessionRecord(session_id, state.created_at, state.cwd, state.updated_at)
                    found[session_id] = (record, state.label_title)
        return found
