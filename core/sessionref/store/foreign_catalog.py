"""The store's other agents' sessions: the sources it reads, what is indexed of them, catch-up and reads.

One `ForeignCatalog` per store. It loads the indexed rows of the sources switched on (a source
switched off is not loaded: its sessions are hidden), walks their roots to catch up (`plan` then
`ForeignPlan.run`, without the store lock; `apply` under it) and reads one session in full for
`read_surface` (`read`). Nothing in a source folder is ever written or locked: readers open
files read-only, inside their root.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Final

from sessionref.service.protocols import Progress
from sessionref.sources import ForeignSession
from sessionref.sources.registry import registered
from sessionref.store.catalog import Catalog, Walk
from sessionref.store.foreign_index import ForeignTables
from sessionref.store.foreign_links import linked_files
from sessionref.store.foreign_state import ForeignEntry, ForeignFile, ForeignRoot, inside_root
from sessionref.store.foreign_walk import ForeignWalk, Known, RootWalk
from sessionref.store.scan import LogState

log = logging.getLogger("sessionref.store")

PROGRESS_EVERY: Final = 100
"""First-time indexing reports progress every this many history files scanned (and at the end)."""

Changes = list[tuple[ForeignEntry | None, ForeignEntry | None]]


@dataclass(frozen=True, slots=True)
class SourceCount:
    """One other agent's source as the store reads it: sessions found, and its last walk (epoch ms)."""

    source: ForeignRoot
    sessions: int
    walked_at: int | None
    problem: str | None = None
    """Why the source's database was skipped at its last walk (it is read again at the next), if it was."""


def _here() -> list[str]:
    """The process's folder and its parents (none when it has no folder any more)."""
    try:
        here = Path(os.getcwd())
    except OSError:
        return []
    return [str(folder) for folder in (here, *here.parents)]


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(slots=True)
class ForeignPlan:
    """The walks of every source, listed and statted; `total` files need a scan."""

    walks: list[RootWalk]
    started_ms: int

    @property
    def total(self) -> int:
        """How many history files `run` will scan (new or changed since the last walk); after `list_files`."""
        return sum(walk.pending for walk in self.walks)

    def list_files(self) -> int:
        """List and stat every root's session files (no lock needed); returns `total`."""
        for walk in self.walks:
            walk.plan()
        return self.total

    def know_cwds(self, folders: Iterable[str | None]) -> None:
        """Add folders a hashed project name may match (the logs' folders a walk just found)."""
        known = frozenset(folder for folder in folders if folder)
        for walk in self.walks:
            walk.know_cwds(known)

    def run(self, progress: Callable[[int], None] | None = None) -> list[ForeignWalk]:
        """Scan every changed file; `progress(files scanned so far)` every `PROGRESS_EVERY` and at the end."""
        results: list[ForeignWalk] = []
        done_before = 0
        total = self.total
        for walk in self.walks:
            base = done_before

            def report(done: int, base: int = base) -> None:
                count = base + done
                if progress is not None and (count % PROGRESS_EVERY == 0 or count == total):
                    progress(count)

            results.append(walk.finish(report))
            done_before += walk.pending
        return results


class ForeignCatalog:
    """Indexed foreign sessions of the sources switched on; callers hold the store lock except in `plan`."""

    def __init__(self, index: object, sources: Sequence[ForeignRoot]) -> None:
        by_kind: dict[str, ForeignRoot] = {}
        for source in sources:
            by_kind[source.kind] = source  # one root per source: the last one given wins
        self.sources: tuple[ForeignRoot, ...] = tuple(by_kind.values())
        self.tables = ForeignTables(index)
        self.files: dict[str, ForeignFile] = {}
        self.entries: dict[str, ForeignEntry] = {}
        self.counts: dict[str, int] = {}
        """Sessions per source kind, as last walked or loaded."""
        self.problems: dict[str, str] = {}
        """Why a source's database was skipped at its last walk, by kind."""
        self._reported: set[str] = set()
        self.reload()

    def reload(self) -> None:
        """Load the indexed rows of the sources switched on (the index may have been rebuilt)."""
        if not self.sources:
            return
        self.tables.forget_gone_roots(self.sources)
        self.files, self.entries = self.tables.load(self.sources)
        self._count()

    def _count(self) -> None:
        self.counts = {source.kind: 0 for source in self.sources}
        for entry in self.entries.values():
            self.counts[entry.kind] = self.counts.get(entry.kind, 0) + 1

    def never_walked(self) -> bool:
        """Whether some source switched on was never walked under its root (its first indexing is due)."""
        walked = self.tables.caught_up()
        return any(walked.get(source.kind, {}).get("root") != source.root for source in self.sources)

    def source_counts(self) -> list[SourceCount]:
        """Every source read: its sessions and when it was last walked under its root (None: never)."""
        walked = self.tables.caught_up()
        counts: list[SourceCount] = []
        for source in self.sources:
            last = walked.get(source.kind)
            at = last["at"] if last is not None and last["root"] == source.root else None
            counts.append(
                SourceCount(source, self.counts.get(source.kind, 0), at, self.problems.get(source.kind))
            )
        return counts

    def plan(
        self, store_cwds: Iterable[str | None] = (), scopes: Mapping[str, tuple[str, ...]] | None = None
    ) -> ForeignPlan:
        """The walks of every source against a snapshot of what is indexed (under the store lock).

        Cheap (copies of dicts); `ForeignPlan.list_files` then lists and stats, without the lock.
        `store_cwds` are the folders of the store's own sessions: with the foreign sessions' own,
        the process's folder and its parents, the folders a hashed project name may match.
        `scopes` (None: every source, whole) walks only the sources it names, each narrowed to
        its folders (see `RootWalk`).
        """
        known_cwds = frozenset(
            folder
            for folder in chain(store_cwds, (entry.cwd for entry in self.entries.values()), _here())
            if folder
        )
        walks: list[RootWalk] = []
        for source in self.sources:
            if scopes is not None and source.kind not in scopes:
                continue
            known = Known(
                {path: row for path, row in self.files.items() if row.kind == source.kind},
                {key: entry for key, entry in self.entries.items() if entry.kind == source.kind},
            )
            walks.append(RootWalk(source, known, known_cwds, None if scopes is None else scopes[source.kind]))
        return ForeignPlan(walks, _now_ms())

    def apply(self, walks: Sequence[ForeignWalk], started_ms: int) -> Changes:
        """Apply finished walks (index and memory); returns the session changes for the catalogue.

        A change is applied only when the session still is as the walk saw it (a later walk may
        have moved it on meanwhile).
        """
        changes: Changes = []
        saved: list[ForeignFile] = []
        deleted: list[str] = []
        for walk in walks:
            for message in walk.refused:
                self._report(message)
            if walk.problem is not None:
                self.problems[walk.source.kind] = walk.problem
            else:
                self.problems.pop(walk.source.kind, None)
            if walk.missing and walk.source.kind in self.counts:
                self._report(f"{walk.source.name}: no folder at {walk.source.root}; its sessions are gone")
            for row in walk.saved_files:
                saved.append(row)
                self.files[row.path] = row
            for path in walk.deleted_files:
                if self.files.pop(path, None) is not None:
                    deleted.append(path)
            for before, after in walk.changes:
                if after is not None:
                    if self.entries.get(after.session_id) == before:
                        self.entries[after.session_id] = after
                        changes.append((before, after))
                elif before is not None and self.entries.get(before.session_id) == before:
                    del self.entries[before.session_id]
                    changes.append((before, None))
        written = [after for _, after in changes if after is not None]
        gone = [before.session_id for before, after in changes if after is None and before is not None]
        self.tables.save(saved, deleted, written, gone)
        # A narrowed walk saw only its folders: the source counts as walked at a whole walk only.
        self.tables.mark_caught_up({walk.source: started_ms for walk in walks if walk.whole})
        self._count()
        return changes

    def _report(self, message: str) -> None:
        if message not in self._reported:
            self._reported.add(message)
            log.warning("%s", message)

    def scopes(self, changed: Iterable[str]) -> dict[str, tuple[str, ...]] | None:
        """The folders to re-walk in each source for these changed paths (absolute, normalised): each
        path's parent folder, by the source whose root (or linked database's folder) holds it; None when
        one is under none."""
        folders: dict[str, set[str]] = {}
        linked: dict[str, frozenset[str]] | None = None
        for path in changed:
            source = next((s for s in self.sources if inside_root(path, s.root)), None)
            if source is None:  # perhaps a database a source's own list names outside its root (Crush)
                linked = {s.kind: linked_files(s) for s in self.sources} if linked is None else linked
                source = next((s for s in self.sources if _linked_here(path, linked[s.kind])), None)
            if source is None:
                return None
            folders.setdefault(source.kind, set()).add(os.path.dirname(path))
        return {kind: tuple(sorted(found)) for kind, found in folders.items()}

    def entry(self, session_id: str) -> ForeignEntry | None:
        """The foreign session listed under `session_id`, if any."""
        return self.entries.get(session_id)


def _linked_here(path: str, linked: frozenset[str]) -> bool:
    """Whether `path` is in the folder of one of `linked` (a database's new `-wal` is not listed yet)."""
    return any(os.path.dirname(path) == os.path.dirname(file) for file in linked)


def walk_all(
    catalog: Catalog,
    known: dict[str, LogState] | None,
    plan: ForeignPlan,
    progress: Progress | None,
    log_scopes: Collection[str] | None = None,
) -> tuple[Walk | None, list[ForeignWalk]]:
    """Walk the logs against `known` (None: not the logs; `log_scopes`: only those folders, see
    `Catalog.walk`), then run `plan`; no lock needed.

    One progress run covers both: new log folders first, then history files to scan.
    """
    extra = plan.list_files()
    logs_total = 0

    def logs_progress(done: int, total: int) -> None:
        nonlocal logs_total
        logs_total = total
        if progress is not None:
            progress(done, total + extra)

    walk = catalog.walk(known, logs_progress, log_scopes) if known is not None else None
    if walk is not None:
        plan.know_cwds(after.cwd for _, after in walk.changes)

    def files_progress(done: int) -> None:
        if progress is not None:
            progress(logs_total + done, logs_total + extra)

    return walk, plan.run(files_progress if extra else None)


def read_entry(entry: ForeignEntry) -> ForeignSession:
    """Read one foreign session in full through its reader (read-only, inside its root).

    Raises `ForeignSourceError` when a file cannot be opened safely (gone, unreadable, outside
    the root, too large). Codex titles come from the index, so the rename index is not read here.
    """
    reader = registered(entry.kind).reader()
    return reader.read(Path(entry.root), entry.native_id, [Path(path) for path in entry.paths])
