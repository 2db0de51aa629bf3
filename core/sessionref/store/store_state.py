"""`StoreState`: the opened state of a store, which its readers and writers are handed.

One object holds what every operation shares: the root, the two locks, the catalogue of logs and
foreign sessions, the discovery index, the write lanes and the subscribers. Opening walks the
logs and the other agents' histories into the index (unless told to start from the index);
`refresh` walks them again later. The lookups here find a session's state, its write target and
its log under the right lock. The operations themselves are collaborators handed this state:
`session_reads.SessionReads`, `session_writes.SessionWrites`,
`conversation_sources.ConversationSources`; `store.SessionStore` composes them.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

from sessionref.service.protocols import Progress
from sessionref.store.access import SurfaceReport, read_lean_surface, read_report, write_target
from sessionref.store.catalog import Catalog, Walk
from sessionref.store.errors import STORE_CLOSED, STORE_UNREADABLE, STORE_WRITE_FAILED, StoreError
from sessionref.store.foreign_access import foreign_refusal
from sessionref.store.foreign_catalog import ForeignCatalog, ForeignPlan, SourceCount, walk_all
from sessionref.store.foreign_state import ForeignEntry, ForeignRoot, inside_root
from sessionref.store.foreign_walk import ForeignWalk
from sessionref.store.index import INDEX_FILE_NAME, DiscoveryIndex, index_path_for
from sessionref.store.lanes import WriteLanes
from sessionref.store.logfile import LogReport
from sessionref.store.scan import LogState
from sessionref.store.subscribers import Subscribers
from sessionref.store.writer import LogTarget

T = TypeVar("T")

MAX_PLACED_CHANGES = 1000
"""More changed paths than this in one batch (a bulk copy, an overflowing watch) walk everything."""


class StoreState:
    """The opened state of the store at `root` and the lookups its operations share. Thread-safe.

    `lock` guards the catalogue and the index; `write_lock` lets this process's writers run one
    at a time (readers never take it). `caught_up` turns true once a walk over the logs ended.
    """

    def __init__(
        self,
        root: Path,
        *,
        progress: Progress | None = None,
        catch_up: bool = True,
        write_foreign: bool = False,
        sources: Sequence[ForeignRoot] = (),
    ) -> None:
        self.root = root.expanduser().absolute()
        self.write_foreign = write_foreign
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise StoreError(STORE_UNREADABLE, f"cannot open the store at {self.root}: {error}") from error
        if not self.root.is_dir():
            raise StoreError(STORE_UNREADABLE, f"the store root {self.root} is not a directory")
        self.root_text = os.fspath(self.root)
        self.lock = threading.RLock()
        self.write_lock = threading.RLock()
        self.subscribers = Subscribers()
        self.lanes = WriteLanes()
        self.closed = False
        self.index = DiscoveryIndex(index_path_for(self.root))
        self.catalog = Catalog(self.root, self.index)
        self.foreign = ForeignCatalog(self.index, sources)
        # A new or rebuilt index has nothing to serve: the first walk is the indexing itself.
        self.caught_up = False
        with self.lock:
            self.catalog.rebuild_ids()
            self.catalog.set_foreign(self.foreign.entries)
            logs = catch_up or self.index.rebuilt or not self.catalog.states
            if logs or self.foreign.never_walked():
                try:
                    self._catch_up(progress, logs=logs)
                except BaseException:  # e.g. raised by `progress` to stop: nothing was written
                    self.index.close()
                    self.lanes.close()
                    raise
            self.catalog.candidates()  # built now so the first keystroke does not pay for it

    def _catch_up(self, progress: Progress | None, *, logs: bool) -> None:
        """Walk the logs (when `logs`) and the foreign sources, then apply both (caller holds the lock).

        One progress run covers both: new log folders first, then history files to scan.
        """
        started = now_ms()  # wall clock, not the stamp of events
        plan = self.foreign.plan(state.cwd for state in self.catalog.states.values())
        walk, foreign = walk_all(self.catalog, dict(self.catalog.states) if logs else None, plan, progress)
        if walk is not None:
            self.catalog.apply_walk(walk)
        self._apply_foreign(foreign, plan.started_ms)
        if walk is not None:
            self.index.mark_caught_up(started)
            self.caught_up = True

    def refresh(self, progress: Progress | None = None) -> bool:
        """Walk the logs and history files again and apply what changed (see `SessionStore.refresh`)."""
        with self.lock:
            self.check_open()
            known = dict(self.catalog.states)
        plan = self._foreign_plan(known.values())
        started = now_ms()  # wall clock, not the stamp of events
        walk, foreign = walk_all(self.catalog, known, plan, progress)
        found = walk is not None and bool(walk.changes or walk.gone)
        found = found or any(result.changes for result in foreign)
        with self.lock:
            self.check_open()
            self.catalog.apply_walk(walk or Walk([], [], []))
            self._apply_foreign(foreign, plan.started_ms)
            self.index.mark_caught_up(started)
            self.caught_up = True
        return found

    def refresh_changed(self, paths: Collection[Path]) -> bool:
        """Walk again only where `paths` changed (see `SessionStore.refresh_changed`)."""
        texts = [os.path.normpath(os.path.abspath(os.fspath(path))) for path in paths]
        if len(texts) > MAX_PLACED_CHANGES:
            return self.refresh()
        log_scopes = _log_scopes(
            (text for text in texts if inside_root(text, self.root_text)), self.root_text
        )
        logs = log_scopes is None or bool(log_scopes)
        with self.lock:
            self.check_open()
            scopes = self.foreign.scopes(text for text in texts if not inside_root(text, self.root_text))
        if scopes is None:  # a path under no root this store reads: walk everything
            return self.refresh()
        if not logs and not scopes:
            return False  # only the index changed: this store's own writes
        with self.lock:
            self.check_open()
            states = dict(self.catalog.states)
        known = states if logs else None
        plan = self._foreign_plan(states.values(), scopes)
        started = now_ms()
        walk, foreign = walk_all(self.catalog, known, plan, None, log_scopes)
        found = walk is not None and bool(walk.changes or walk.gone)
        found = found or any(result.changes for result in foreign)
        with self.lock:
            self.check_open()
            if walk is not None:
                self.catalog.apply_walk(walk)
                if log_scopes is None:  # a narrowed walk saw only its folders: not a catch-up
                    self.index.mark_caught_up(started)
            self._apply_foreign(foreign, plan.started_ms)
        return found

    def _foreign_plan(
        self, states: Iterable[LogState], scopes: Mapping[str, tuple[str, ...]] | None = None
    ) -> ForeignPlan:
        """The sources' walks, given a copy of the logs' states: their folders are gathered
        without the lock (100,000 of them held it for 5-30 ms, which a keystroke's lookup waited
        for), the plan's own snapshot is taken under it."""
        store_cwds = {state.cwd for state in states}
        with self.lock:
            self.check_open()
            return self.foreign.plan(store_cwds, scopes)

    def _apply_foreign(self, walks: list[ForeignWalk], started_ms: int) -> None:
        self.catalog.apply_foreign(self.foreign.apply(walks, started_ms))

    def recent_files(self, limit: int) -> list[str]:
        """The files of the `limit` most recently active sessions (see `SessionStore.recent_files`)."""
        with self.lock:
            self.check_open()
            return self.catalog.recent_files(limit)

    def source_counts(self) -> list[SourceCount]:
        """The foreign sources: sessions found and when each was last walked."""
        with self.lock:
            self.check_open()
            return self.foreign.source_counts()

    def close(self) -> None:
        """Run the writes already queued, then release the index; idempotent."""
        self.lanes.close()
        with self.lock:
            if not self.closed:
                self.closed = True
                self.index.close()

    def check_open(self) -> None:
        """Raise `STORE_CLOSED` once the store is closed."""
        if self.closed:
            raise StoreError(STORE_CLOSED, "the session store is closed")

    def foreign_entry(self, session_id: str) -> ForeignEntry | None:
        """The foreign session listed under `session_id` (None for a log's id or an unknown one)."""
        with self.lock:
            self.check_open()
            return self.foreign.entry(session_id) if isinstance(session_id, str) else None

    def refuse_foreign(self, session_id: str) -> None:
        """Raise the read-only refusal when `session_id` is a foreign session."""
        entry = self.foreign_entry(session_id)
        if entry is not None:
            raise foreign_refusal(entry)

    def log_state(self, session_id: str) -> LogState:
        """The catalogue's state of a log (`STORE_SESSION_NOT_FOUND` for an unknown id)."""
        with self.lock:
            self.check_open()
            return self.catalog.require(session_id)

    def target(self, session_id: str) -> tuple[LogState, LogTarget]:
        """A log's state and where to write it (`STORE_READ_ONLY` when it may not be written)."""
        state = self.log_state(session_id)
        target = write_target(self.root_text, state.path, session_id, write_foreign=self.write_foreign)
        return state, target

    def report(self, session_id: str) -> LogReport:
        """The parsed log of a session of this store (its header, events and skipped lines)."""
        return read_report(self.root_text, self.log_state(session_id).path, session_id)

    def surface(self, session_id: str) -> SurfaceReport:
        """The folded surface of a session of this store, read lean (see `access.read_lean_surface`)."""
        return read_lean_surface(self.root_text, self.log_state(session_id).path, session_id)

    def rescan_after_write(self, state: LogState) -> None:
        """Bring the catalogue's row of a log just written up to date (unless closed meanwhile)."""
        with self.lock:
            if not self.closed:
                self.catalog.rescan(state)

    async def locked(self, work: Callable[[], T]) -> T:
        """`work()` under the store lock, never waiting for it on the event loop.

        Uncontended (the usual case), it runs at once; while another thread holds the lock (a
        catch-up or a write updating the catalogue), it waits in a worker thread instead.
        """
        if self.lock.acquire(blocking=False):
            try:
                self.check_open()
                return work()
            finally:
                self.lock.release()
        return await asyncio.to_thread(self.with_lock, work)

    def with_lock(self, work: Callable[[], T]) -> T:
        """`work()` under the store lock (blocking), once the store is known to be open."""
        with self.lock:
            self.check_open()
            return work()


def now_ms() -> int:
    """Now, in epoch milliseconds (the default stamp of what the store writes)."""
    return time.time_ns() // 1_000_000


def io_error(what: str, error: OSError) -> StoreError:
    """`STORE_WRITE_FAILED` for an OS error while the store tried to `what` (a write: ENOSPC, EROFS…)."""
    return StoreError(STORE_WRITE_FAILED, f"cannot {what}: {error.strerror or error}")


def _log_scopes(paths: Iterable[str], root: str) -> set[str] | None:
    """The store folders to walk for changed `paths` inside `root` (absolute, normalised): each one's
    `project/session` folder, or its `project` folder for a path right in one that is not there (a
    session folder gone, or a name standing for the project folder itself); the index's own files are
    left out. None: the root itself changed (walk every log)."""
    scopes: set[str] = set()
    for path in paths:
        relative = os.path.relpath(path, root)
        if relative == ".":
            return None
        parts = relative.split(os.sep)
        if len(parts) == 1 and parts[0].startswith(INDEX_FILE_NAME):
            continue  # this store's (or another sessionref's) index: its writes are known
        whole_project = len(parts) == 2 and not os.path.lexists(path)
        scopes.add(parts[0] if whole_project else "/".join(parts[:2]))
    return scopes
