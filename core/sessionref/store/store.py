"""`SessionStore`: the embedded session store (DSH-compatible logs plus a SQLite discovery index).

Writes go to plain `session.jsonl` logs of sessions sessionref created, under a per-session OS
lock shared by every sessionref process, one `fsync` per batch (see `writer`). On an event loop,
writes go through the `*_async`/`enqueue_append` facade: each session has its own ordered write
lane on worker threads (`lanes`), so the loop never waits for a disk write and nothing reorders.
DSH `.zstd` logs and sessions created by other programs are only read (unless `write_foreign=True`). Discovery
(`list_sessions`, `read_titles`, `search_candidates`) is answered from the index and never reads
a log; `read_surface` reads and folds one log. No read ever writes: not a log, not a side file
(only the discovery index, which is ours).

Other agents' histories (`sources`: Claude Code, Codex CLI, Gemini CLI roots) are indexed and
listed beside the logs (`foreign_catalog`); their sessions (`claude-code:<uuid>`, …) are read
through their readers and are never written (`foreign_access`).

`SessionStore` is one class put together from one file per concern: the opened state and the
lookups every operation shares (`store_base`), the synchronous writes (`session_writes`), their
event-loop facade (`loop_writes`), the reads and discovery queries (`session_reads`) and the
conversation index's sources (`conversation_sources`). `open_store`, `refresh` and `close` are here.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from sessionref.service.protocols import Progress
from sessionref.store.catalog import Walk
from sessionref.store.conversation_sources import ConversationSource, ConversationSources
from sessionref.store.foreign_catalog import SourceCount, walk_all
from sessionref.store.foreign_state import ForeignRoot
from sessionref.store.loop_writes import LoopWrites
from sessionref.store.session_reads import SessionReads

__all__ = ["ConversationSource", "SessionStore", "open_store"]


def open_store(
    root: str | Path,
    *,
    progress: Progress | None = None,
    catch_up: bool = True,
    write_foreign: bool = False,
    sources: Sequence[ForeignRoot] = (),
) -> SessionStore:
    """Open (creating if needed) the store at `root`; `progress(done, total)` reports first-time indexing.

    With `catch_up=False` and an existing index, discovery is served from the index at once and
    the walk over the logs is left to `refresh()` (see `SessionStore.caught_up`). With
    `write_foreign=True` sessions another program created may be appended to (off by default:
    they are read-only; `[store] write_foreign_sessions` in the settings). `sources` are the
    other agents' history roots to list and read too (none by default; a host resolves them
    from the `[sources]` settings); a source indexed for the first time is walked during the
    open, with progress, even with `catch_up=False`.
    """
    return SessionStore(
        Path(root), progress=progress, catch_up=catch_up, write_foreign=write_foreign, sources=sources
    )


class SessionStore(LoopWrites, SessionReads, ConversationSources):
    """Sessions under one root; implements `SessionQuery` and `CandidateSearch`. Thread-safe.

    Opened with `catch_up=False`, the store starts from its discovery index without walking the
    logs. Until `refresh()` has run (`caught_up`), what was written by others while it was closed
    is caught up only where it matters for correctness: reads always read the log itself and
    every write reads the log's tail under the session lock. Titles, new sessions and removed
    sessions written by others show up in discovery once `refresh()` completes.
    """

    def refresh(self, progress: Progress | None = None) -> None:
        """Catch the index up with logs and history files created, grown or removed meanwhile.

        The walk over the files runs without the store lock (other calls are served meanwhile);
        only applying its result takes the lock. `progress` reports logs and history files seen
        for the first time. Nothing but the index is written.
        """
        with self._lock:
            self._check_open()
            known = dict(self._catalog.states)
            plan = self._foreign.plan()
        started = time.time_ns() // 1_000_000  # wall clock, not the stamp of events
        walk, foreign = walk_all(self._catalog, known, plan, progress)
        with self._lock:
            self._check_open()
            self._catalog.apply_walk(walk or Walk([], [], []))
            self._apply_foreign(foreign, plan.started_ms)
            self._index.mark_caught_up(started)
            self.caught_up = True

    def sources(self) -> list[SourceCount]:
        """The other agents' sources this store reads: sessions found and when each was last walked."""
        with self._lock:
            self._check_open()
            return self._foreign.source_counts()

    def close(self) -> None:
        """Finish the writes already queued, then release the index; further calls raise STORE_CLOSED.

        Idempotent. Writes queued by `enqueue_append` and the `*_async` methods still land.
        """
        self._lanes.close()
        with self._lock:
            if not self._closed:
                self._closed = True
                self._index.close()
