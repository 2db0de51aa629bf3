"""`TextIndex`: the SQLite FTS5 conversation index (implements `ConversationSearch`).

Two connections to one WAL file: searches read on one while updates write on the other, so a
catch-up never blocks a keystroke. Searches are serialised among themselves (one at a time,
each cancellable mid-statement: a progress handler polls its `SearchCancellation`), updates too.
`update` batches changes into transactions of about `BATCH_ROWS` messages and writes a batch
on a worker thread while the caller prepares the next one (reading logs and indexing overlap
on two cores). A damaged file found at any point is deleted and recreated empty
(`rebuilt`, `resets`): `indexed()` is then empty and the caller feeds everything again. A file
another process replaced is followed.

`TextIndex` composes the file and its connections (`index_file.IndexFile`) with the writer of
changes (`index_updates.IndexUpdater`); the searches are here.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path

from sessionref.service.conversation_rows import ConversationRow
from sessionref.service.protocols import ConversationRequest, ConversationSearchResult
from sessionref.store.cache_file import SlowStatements
from sessionref.textsearch.errors import (
    TEXT_SEARCH_CANCELLED,
    TEXT_SEARCH_INVALID_ARGUMENT,
    TextSearchError,
)
from sessionref.textsearch.index_file import IndexFile
from sessionref.textsearch.index_updates import BATCH_ROWS, IndexUpdater
from sessionref.textsearch.protocol import (
    FactsProvider,
    IndexedSession,
    Progress,
    SearchCancellation,
    SessionChange,
    UpdateReport,
)
from sessionref.textsearch.query import QueryPlan, parse_query
from sessionref.textsearch.schema import KIND_ASSISTANT, KIND_CHECKPOINT, SQL_VARIABLES
from sessionref.textsearch.writer import loaded_text

# The most results one search may ask for.
MAX_LIMIT = 500
# A running search polls its cancellation every this many SQLite virtual-machine steps.
PROGRESS_OPS = 1000


class TextIndex:
    """The conversation index stored at `path` (created when missing, recreated when damaged).

    `verify=True` runs `PRAGMA quick_check` on open (about 1.5 s for a 2.6 GB index); a damaged
    file is also detected by any later SQLite error saying so. Raises `TEXT_SEARCH_UNAVAILABLE`
    when this Python's SQLite has no FTS5 or the file can be neither opened nor created. `slow`
    reports its slow statements (off by default; see `sessionref.store.cache_file`).
    """

    def __init__(self, path: str | Path, *, verify: bool = True, slow: SlowStatements | None = None) -> None:
        self.file = IndexFile(path, verify=verify, slow=slow)
        self._updater = IndexUpdater(self.file)

    @property
    def path(self) -> Path:
        """Where the index file is."""
        return self.file.path

    @property
    def rebuilt(self) -> bool:
        """Whether the file was (re)created empty since it was opened: feed it everything again."""
        return self.file.rebuilt

    @property
    def resets(self) -> int:
        """How many times a damaged file was found and started again empty while open."""
        return self.file.resets

    def update(
        self,
        changes: Iterable[SessionChange],
        *,
        progress: Progress | None = None,
        total: int | None = None,
        bulk: bool = False,
    ) -> UpdateReport:
        """Apply `changes` in batches, each in one transaction (see `IndexUpdater.update`)."""
        return self._updater.update(changes, progress=progress, total=total, bulk=bulk)

    def wait_for_lists(self, timeout: float | None = None) -> bool:
        """Wait until the word lists of every shard the updates sealed are computed (they are, in
        the background: `list_worker`); False when `timeout` passed first."""
        return self._updater.lists.wait_idle(timeout)

    def close(self) -> None:
        """Close the file's connections (idempotent); later calls raise `TEXT_SEARCH_CLOSED`."""
        self._updater.close()
        self.file.close()

    def search(
        self,
        request: ConversationRequest,
        *,
        facts: FactsProvider,
        cancel: SearchCancellation | None = None,
    ) -> ConversationSearchResult:
        """Sessions whose conversation matches `request.text`; see `ConversationSearch.search`.

        `cancel.cancel()` from another thread stops the statement in flight: a progress handler
        polls it every `PROGRESS_OPS` SQLite steps.
        """
        text = request.text
        return self.search_plan(
            parse_query(text if isinstance(text, str) else ""), request, facts=facts, cancel=cancel
        )

    def search_plan(
        self,
        plan: QueryPlan,
        request: ConversationRequest,
        *,
        facts: FactsProvider,
        cancel: SearchCancellation | None = None,
    ) -> ConversationSearchResult:
        """`search` for `request` with its text already parsed by `parse_query` (`plan`), so that a
        caller that looks at the plan first (is it worth asking the index?) parses each keystroke once."""
        limit = request.limit
        if type(limit) is not int or not 1 <= limit <= MAX_LIMIT:
            raise TextSearchError(
                TEXT_SEARCH_INVALID_ARGUMENT, f"the search limit must be an integer from 1 to {MAX_LIMIT}"
            )
        if plan.status != "ok":
            return ConversationSearchResult(status=plan.status, pending=plan.pending)
        switch = cancel if cancel is not None else SearchCancellation()

        def work(connection: sqlite3.Connection) -> ConversationSearchResult:
            connection.set_progress_handler(lambda: 1 if switch.cancelled else 0, PROGRESS_OPS)
            try:
                switch.raise_if_cancelled()
                connection.execute("BEGIN")
                return self.file.searcher.search(plan, request, facts=facts, cancel=switch)
            except sqlite3.OperationalError as error:
                if error.sqlite_errorcode == sqlite3.SQLITE_INTERRUPT or switch.cancelled:
                    raise TextSearchError(
                        TEXT_SEARCH_CANCELLED, "the conversation search was cancelled"
                    ) from None
                raise
            finally:
                connection.set_progress_handler(None, 0)
                if connection.in_transaction:
                    connection.execute("ROLLBACK")

        return self.file.read(work)

    def indexed(self, session_ids: Collection[str] | None = None) -> Mapping[str, IndexedSession]:
        """What is indexed, by session id (of `session_ids` only, when given)."""
        query = "SELECT session_id, through_seq, source, messages FROM sessions"

        def work(connection: sqlite3.Connection) -> Mapping[str, IndexedSession]:
            if session_ids is None:
                rows = connection.execute(query).fetchall()
            else:
                wanted = list(session_ids)
                rows = []
                for start in range(0, len(wanted), SQL_VARIABLES):
                    chunk = wanted[start : start + SQL_VARIABLES]
                    marks = ",".join("?" * len(chunk))
                    rows += connection.execute(f"{query} WHERE session_id IN ({marks})", chunk).fetchall()
            return {session_id: IndexedSession(seq, source, count) for session_id, seq, source, count in rows}

        return self.file.read(work)

    def session_rows(self, session_id: str) -> list[ConversationRow]:
        """The rows indexed for a session, in seq order (empty when it is not indexed).

        Seq order is the projection's order except after a compaction, whose checkpoint stands
        where the messages it replaced stood.

        For inspection and tests: the logs stay the source of truth for what a session says.
        """

        def work(connection: sqlite3.Connection) -> list[ConversationRow]:
            found = connection.execute(
                "SELECT m.seq, m.kind, t.text, m.time FROM sessions AS s "
                "JOIN messages AS m ON m.session = s.key JOIN message_texts AS t ON t.id = m.id "
                "WHERE s.session_id = ? ORDER BY m.seq",
                (session_id,),
            )
            return [
                ConversationRow(
                    seq,
                    "assistant" if kind == KIND_ASSISTANT else "user",
                    loaded_text(text),
                    kind == KIND_CHECKPOINT,
                    time,
                )
                for seq, kind, text, time in found
            ]

        return self.file.read(work)


__all__ = ["BATCH_ROWS", "MAX_LIMIT", "TextIndex"]
