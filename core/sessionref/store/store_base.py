"""`StoreBase`: what every `SessionStore` operation shares: the root, the locks, the catalogue.

Opening walks the logs and the other agents' histories into the discovery index (unless told
to start from the index); the helpers here find a session's state, its write target and its
log under the right lock. The operations themselves are in `session_writes`, `loop_writes`,
`session_reads` and `conversation_sources`; `store.SessionStore` puts them together.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from sessionref.service.protocols import Progress
from sessionref.store.access import read_report, write_target
from sessionref.store.catalog import Catalog
from sessionref.store.errors import STORE_CLOSED, STORE_UNREADABLE, StoreError
from sessionref.store.foreign_access import foreign_refusal
from sessionref.store.foreign_catalog import ForeignCatalog, walk_all
from sessionref.store.foreign_state import ForeignEntry, ForeignRoot
from sessionref.store.foreign_walk import ForeignWalk
from sessionref.store.index import DiscoveryIndex, index_path_for
from sessionref.store.lanes import WriteLanes
from sessionref.store.logfile import LogReport
from sessionref.store.scan import LogState
from sessionref.store.subscribers import Subscribers
from sessionref.store.writer import LogTarget

T = TypeVar("T")


class StoreBase:
    """The opened state of a store and the lookups its operations share (see `SessionStore`)."""

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
        self._root_text = os.fspath(self.root)
        self._lock = threading.RLock()  # the catalogue and index
        self._write_lock = threading.RLock()  # this process's writers, one at a time (never readers)
        self._subscribers = Subscribers()
        self._lanes = WriteLanes()
        self._closed = False
        self._index = DiscoveryIndex(index_path_for(self.root))
        self._catalog = Catalog(self.root, self._index)
        self._foreign = ForeignCatalog(self._index, sources)
        # A new or rebuilt index has nothing to serve: the first walk is the indexing itself.
        self.caught_up = False
        with self._lock:
            self._catalog.rebuild_ids()
            self._catalog.set_foreign(self._foreign.entries)
            logs = catch_up or self._index.rebuilt or not self._catalog.states
            if logs or self._foreign.never_walked():
                try:
                    self._catch_up(progress, logs=logs)
                except BaseException:  # e.g. raised by `progress` to stop: nothing was written
                    self._index.close()
                    self._lanes.close()
                    raise
            self._catalog.candidates()  # built now so the first keystroke does not pay for it

    def _catch_up(self, progress: Progress | None, *, logs: bool) -> None:
        """Walk the logs (when `logs`) and the foreign sources, then apply both (caller holds the lock).

        One progress run covers both: new log folders first, then history files to scan.
        """
        started = time.time_ns() // 1_000_000  # wall clock, not the stamp of events
        plan = self._foreign.plan()
        walk, foreign = walk_all(self._catalog, dict(self._catalog.states) if logs else None, plan, progress)
        if walk is not None:
            self._catalog.apply_walk(walk)
        self._apply_foreign(foreign, plan.started_ms)
        if walk is not None:
            self._index.mark_caught_up(started)
            self.caught_up = True

    def _apply_foreign(self, walks: list[ForeignWalk], started_ms: int) -> None:
        self._catalog.apply_foreign(self._foreign.apply(walks, started_ms))

    def _foreign_entry(self, session_id: str) -> ForeignEntry | None:
        """The foreign session listed under `session_id` (None for a log's id or an unknown one)."""
        with self._lock:
            self._check_open()
            return self._foreign.entry(session_id) if isinstance(session_id, str) else None

    def _refuse_foreign(self, session_id: str) -> None:
        """Raise the read-only refusal when `session_id` is a foreign session."""
        entry = self._foreign_entry(session_id)
        if entry is not None:
            raise foreign_refusal(entry)

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(STORE_CLOSED, "the session store is closed")

    def _state(self, session_id: str) -> LogState:
        with self._lock:
            self._check_open()
            return self._catalog.require(session_id)

    def _target(self, session_id: str) -> tuple[LogState, LogTarget]:
        state = self._state(session_id)
        target = write_target(self._root_text, state.path, session_id, write_foreign=self.write_foreign)
        return state, target

    def _report(self, session_id: str) -> LogReport:
        return read_report(self._root_text, self._state(session_id).path, session_id)

    def _caught_up_after_write(self, state: LogState) -> None:
        with self._lock:
            if not self._closed:
                self._catalog.rescan(state)

    async def _locked(self, work: Callable[[], T]) -> T:
        """`work()` under the store lock, never waiting for it on the event loop.

        Uncontended (the usual case), it runs at once; while another thread holds the lock (a
        catch-up or a write updating the catalogue), it waits in a worker thread instead.
        """
        if self._lock.acquire(blocking=False):
            try:
                self._check_open()
                return work()
            finally:
                self._lock.release()
        return await asyncio.to_thread(self._with_lock, work)

    def _with_lock(self, work: Callable[[], T]) -> T:
        with self._lock:
            self._check_open()
            return work()


def now_ms() -> int:
    """Now, in epoch milliseconds (the default stamp of what the store writes)."""
    return time.time_ns() // 1_000_000


def io_error(what: str, error: OSError) -> StoreError:
    """`STORE_UNREADABLE` for an OS error while the store tried to `what`."""
    return StoreError(STORE_UNREADABLE, f"cannot {what}: {error.strerror or error}")
