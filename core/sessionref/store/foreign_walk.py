"""Catching the index up with one source root: new, grown, rewritten and removed history files.

A walk lists the root's session files with the source's reader (`sessionref.sources.reader`:
no file is read, except the first line of a Codex file whose name lacks its id), stats each one
and compares size and mtime with the stored `ForeignFile`: an unchanged file costs that one stat.
A changed or new file is scanned with the reader's resumable discovery scan, from the stored
state (only the new bytes of a file that grew are read; a rewritten file is scanned again from
its start). Sessions are then
rebuilt only where one of their files changed:

* a file whose session the walk does not name (Claude Code, Gemini CLI: `SessionFiles` without a
  native id) is one session. Two files naming the same session (the same Claude uuid under two
  project folders, a copied Gemini file) are one session: the file with the newest activity is
  read (ties: the smaller path).
* a session the walk names (Codex CLI) groups its files; it is summarised again when one of its
  files changed, a file joined or left it, or its name in the reader's title index did.

A walk may be narrowed to the folders a file watch reported changed (`scope`): the reader lists
only those (`sessionref.sources.walking.only_under`), and only the files and sessions found there
or indexed there are compared, so an unchanged folder costs nothing. A narrowed walk widens to the
whole root when it cannot be sure: the source has a title index or groups a session's files
(Codex CLI, Copilot CLI), or a session found in scope also has a file outside it.

A root that is not a folder (any more) removes every session found under it. Nothing is written:
a walk only reads the source and returns what changed (`ForeignWalk`), applied by the caller.
`plan` (listing and stats) runs first so that first-time indexing can report a total; `finish`
scans. Both run without the store lock.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from sessionref.sources import ForeignSourceError, ForeignSummary
from sessionref.sources.lines import is_inside
from sessionref.sources.reader import SessionFiles, SourceReader, WalkContext
from sessionref.sources.registry import registered
from sessionref.sources.scan import FileScan
from sessionref.sources.walking import only_under
from sessionref.store.foreign_links import holds, linked_files
from sessionref.store.foreign_state import (
    VERSION_SEPARATOR,
    ForeignEntry,
    ForeignFile,
    ForeignRoot,
    file_version,
)

log = logging.getLogger("sessionref.store")

ScanProgress = Callable[[int], None]
"""`progress(files_scanned)` while a walk scans changed files."""

_DUMPS: Final = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


@dataclass(slots=True)
class Known:
    """What the index knows of one root before a walk (a snapshot: the walk never changes it)."""

    files: dict[str, ForeignFile] = field(default_factory=dict)
    entries: dict[str, ForeignEntry] = field(default_factory=dict)


@dataclass(slots=True)
class ForeignWalk:
    """What one walk of a root found: file rows to save or delete, session changes, refusals."""

    source: ForeignRoot
    saved_files: list[ForeignFile] = field(default_factory=list)
    deleted_files: list[str] = field(default_factory=list)
    changes: list[tuple[ForeignEntry | None, ForeignEntry | None]] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    missing: bool = False
    problem: str | None = None
    """Why a database of the source was skipped this time (busy, unreadable, unknown schema), if it was."""
    sessions: int = 0
    """Sessions under the root after the walk."""
    whole: bool = True
    """Whether the walk covered the whole root (False: narrowed to the folders a watch reported)."""


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def _unchanged(row: ForeignFile | None, info: os.stat_result | None) -> bool:
    """Whether `info` (a stat now) matches what `row` was scanned at."""
    if row is None or info is None:
        return False
    return (row.size, row.mtime_ns) == (info.st_size, info.st_mtime_ns)


def _loaded(kind: type[FileScan], row: ForeignFile | None) -> Any:
    """The stored scan state of `row` as a `kind` (None when absent or not usable: scan afresh)."""
    if row is None:
        return None
    try:
        value = json.loads(row.scan)
    except (ValueError, RecursionError):
        return None
    return kind.from_json(value)


def _entry(source: ForeignRoot, summary: ForeignSummary, files: Mapping[str, ForeignFile]) -> ForeignEntry:
    paths = tuple(str(path) for path in summary.paths)
    version = summary.version or VERSION_SEPARATOR.join(
        file_version(files[p].size, files[p].mtime_ns) for p in paths
    )
    return ForeignEntry(
        session_id=summary.session_id,
        kind=source.kind,
        root=source.root,
        native_id=summary.native_id,
        cwd=summary.cwd,
        created_at=summary.created_at,
        updated_at=summary.updated_at,
        title=summary.title,
        paths=paths,
        version=version,
    )


class RootWalk:
    """One walk of one root (or of the folders `scope` names in it): `plan()` lists and stats,
    `finish(progress)` scans and compares."""

    def __init__(
        self,
        source: ForeignRoot,
        known: Known,
        known_cwds: frozenset[str] = frozenset(),
        scope: tuple[str, ...] | None = None,
    ) -> None:
        self.source = source
        self.known = known
        self.root = Path(source.root)
        self.reader: SourceReader = registered(source.kind).reader()
        self.scope = None if self.reader.title_index is not None else scope
        """The folders (normalised, absolute) this walk is narrowed to; None: the whole root."""
        self.result = ForeignWalk(source)
        self.pending = 0
        """Files `finish` will scan (new or changed): the walk's share of a progress total."""
        self._found: dict[str, os.stat_result] = {}
        self._rows: dict[str, ForeignFile] = {}
        self._singles: list[str] = []
        self._groups: list[tuple[str, SessionFiles]] = []
        self._databases: list[SessionFiles] = []
        self._context = WalkContext(known_cwds=known_cwds)
        self._names_loaded = False
        self._scanned = 0
        self._progress: ScanProgress = lambda done: None

    def know_cwds(self, folders: frozenset[str]) -> None:
        """Add folders a hashed project name may match (before `finish`)."""
        self._context.known_cwds |= folders

    # -- planning ----------------------------------------------------------------------------

    def plan(self) -> int:
        """List the root's session files and stat them; returns how many need a scan."""
        if not os.path.isdir(self.root):
            self.result.missing = True
            return 0
        paths = self._list()
        if self.scope is not None and self._groups:  # a session's files may lie outside the scope
            self.scope = None
            paths = self._list()
        linked = linked_files(self.source) if self._databases else frozenset()
        for path in paths:
            text = str(path)
            info = _stat(text) if holds(text, self.source.root, linked) else None
            if info is None:
                continue
            self._found[text] = info
            if not _unchanged(self.known.files.get(text), info):
                self.pending += 1
        return self.pending

    def _list(self) -> list[Path]:
        """Every session file the reader lists (inside `scope`, when narrowed), sorted into kinds."""
        self._singles, self._groups, self._databases = [], [], []
        paths: list[Path] = []
        narrowed = (
            only_under([Path(folder) for folder in self.scope]) if self.scope is not None else nullcontext()
        )
        with narrowed:
            for files in self.reader.walk(self.root):
                if files.database:
                    self._databases.append(files)
                elif files.native_id is None:
                    self._singles.extend(str(path) for path in files.paths)
                else:
                    self._groups.append((files.native_id, files))
                paths.extend(files.paths)
        return paths

    def _in_scope(self, path: str) -> bool:
        """Whether this walk decides about `path`: listed by it, or inside its scope (always when whole)."""
        return self.scope is None or path in self._found or any(is_inside(path, f) for f in self.scope)

    # -- scanning ----------------------------------------------------------------------------

    def finish(self, progress: ScanProgress | None = None) -> ForeignWalk:
        """Scan what `plan` found changed and work out the session changes."""
        if progress is not None:
            self._progress = progress
        result = self.result
        if result.missing:
            result.deleted_files = list(self.known.files)
            result.changes = [(entry, None) for entry in self.known.entries.values()]
            return result
        self._rows = {path: self.known.files[path] for path in self._found if path in self.known.files}
        renamed = self._title_index()
        entries = self._single_file_entries()
        if entries is None:  # a session found in scope has a file outside it: walk the whole root
            wider = RootWalk(self.source, self.known, self._context.known_cwds)
            wider.plan()
            return wider.finish(progress)
        entries.update(self._grouped_entries(renamed))
        entries.update(self._database_entries())
        for session_id, entry in entries.items():
            before = self.known.entries.get(session_id)
            if before != entry:
                result.changes.append((before, entry))
        decided = {
            session_id
            for session_id, entry in self.known.entries.items()
            if self.scope is None or any(self._in_scope(path) for path in entry.paths)
        }
        result.changes.extend(
            (self.known.entries[session_id], None) for session_id in decided if session_id not in entries
        )
        known = self.known.files
        result.saved_files = [row for path, row in self._rows.items() if known.get(path) is not row]
        result.deleted_files = [path for path in known if path not in self._rows and self._in_scope(path)]
        result.sessions = len(entries) + len(self.known.entries.keys() - decided - entries.keys())
        result.whole = self.scope is None
        return result

    def _changed(self, path: str) -> bool:
        return not _unchanged(self.known.files.get(path), self._found.get(path))

    def _refuse(self, path: str, error: Exception) -> None:
        message = getattr(error, "message", None) or str(error)
        self.result.refused.append(f"skipping {path}: {message}")
        self._rows.pop(path, None)

    def _keep(self, path: str, scan: FileScan, session_id: str | None) -> None:
        """Record the new scan state of `path` (saved to the index when the walk is applied)."""
        kind, root, state = self.source.kind, self.source.root, _DUMPS(scan.to_json())
        self._rows[path] = ForeignFile(path, kind, root, session_id, scan.size, scan.mtime_ns, state)

    def _scan(self, path: str, *, fresh: bool) -> tuple[FileScan, bool]:
        """`(state, scanned now)` of `path`: scanned (resuming from the stored state) when `fresh`, else
        the stored state, scanned only when it cannot be used. Raises `ForeignSourceError`, `OSError`."""
        row = self.known.files.get(path)
        stored: FileScan | None = _loaded(self.reader.scan_type, row)
        if not fresh and stored is not None:
            return stored, False
        if fresh:
            self._scanned += 1
            self._progress(self._scanned)
        return self.reader.scan(self.root, Path(path), stored), True

    # -- one file, one session (its id found by scanning it) --------------------------------

    def _summary(self, path: str, *, fresh: bool) -> ForeignSummary | None:
        """The summary of one file (scanned when `fresh`), its row kept; None when it is no session."""
        try:
            scan, scanned = self._scan(path, fresh=fresh)
            summary = self.reader.summarize(self.root, None, (scan,), self._context)
        except (ForeignSourceError, OSError) as error:
            self._refuse(path, error)
            return None
        if scanned:
            self._keep(path, scan, None if summary is None else summary.session_id)
        return summary

    def _single_file_entries(self) -> dict[str, ForeignEntry] | None:
        """The single-file sessions; None when narrowed and one of them has a file outside the scope."""
        summaries: dict[str, ForeignSummary] = {}
        by_id: dict[str, list[str]] = {}
        for path in self._singles:
            if path not in self._found:
                continue
            row = self.known.files.get(path)
            if not self._changed(path) and row is not None:
                if row.session_id is not None:
                    by_id.setdefault(row.session_id, []).append(path)
                continue
            summary = self._summary(path, fresh=True)
            if summary is not None:
                summaries[path] = summary
                by_id.setdefault(summary.session_id, []).append(path)
        entries: dict[str, ForeignEntry] = {}
        for session_id, paths in by_id.items():
            before = self.known.entries.get(session_id)
            if self.scope is not None and before is not None and not all(map(self._in_scope, before.paths)):
                return None
            alone = len(paths) == 1 and paths[0] not in summaries
            if alone and before is not None and before.paths == (paths[0],):
                entries[session_id] = before  # its one file did not change
                continue
            chosen = [
                summary
                for path in paths
                if (summary := summaries.get(path) or self._summary(path, fresh=False)) is not None
                and summary.session_id == session_id
            ]
            if chosen:  # several files of one session: the one with the newest activity is read
                best = min(chosen, key=lambda item: (-item.updated_at, str(item.paths[0])))
                entries[session_id] = _entry(self.source, best, self._rows)
        return entries

    # -- sessions the walk names: their files grouped, titles from the title index ----------

    def _title_index(self) -> set[str]:
        """Catch the title index up; returns the ids whose name changed since its stored scan.

        Unchanged (one stat), its stored names are parsed only if a session needs them.
        """
        index = self.reader.title_index
        if index is None:
            self._names_loaded = True
            return set()
        path = str(index.path(self.root))
        row = self.known.files.get(path)
        if row is not None and _unchanged(row, _stat(path)):
            self._rows[path] = row
            return set()
        previous: FileScan | None = _loaded(index.scan_type, row)
        names = index.scan(self.root, previous)
        if names.size >= 0:  # there is an index file (a missing one scans as empty, size -1)
            self._keep(path, names, None)
        self._context.names = index.names(names)
        self._names_loaded = True
        old = index.names(previous) if previous is not None else {}
        now = self._context.names
        return {key for key in old.keys() | now.keys() if old.get(key) != now.get(key)}

    def _load_names(self) -> None:
        index = self.reader.title_index
        if self._names_loaded or index is None:
            return
        stored = _loaded(index.scan_type, self._rows.get(str(index.path(self.root))))
        self._context.names = index.names(stored) if stored is not None else {}
        self._names_loaded = True

    def _grouped_entries(self, renamed: set[str]) -> dict[str, ForeignEntry]:
        entries: dict[str, ForeignEntry] = {}
        for native_id, group in self._groups:
            session_id = f"{self.source.kind}:{native_id}"
            paths = [str(path) for path in group.paths if str(path) in self._found]
            changed = [path for path in paths if self._changed(path)]
            before = self.known.entries.get(session_id)
            same_files = before is not None and set(before.paths) == set(paths)
            if before is not None and not changed and same_files and native_id not in renamed:
                entries[session_id] = before
                continue
            scans: list[FileScan] = []
            for path in paths:
                try:
                    scan, scanned = self._scan(path, fresh=path in changed)
                except (ForeignSourceError, OSError) as error:
                    self._refuse(path, error)
                    continue
                if scanned:
                    self._keep(path, scan, session_id)
                scans.append(scan)
            if scans:
                self._load_names()
                summary = self.reader.summarize(self.root, native_id, scans, self._context)
                if summary is not None:
                    entries[session_id] = _entry(self.source, summary, self._rows)
        return entries

    # -- sessions inside a database: listed by its own timestamps, only when its files changed --

    def _database_entries(self) -> dict[str, ForeignEntry]:
        entries: dict[str, ForeignEntry] = {}
        listing = self.reader.database
        for files in self._databases:
            paths = [str(path) for path in files.paths if str(path) in self._found]
            if listing is None or not paths or paths[0] != str(files.paths[0]):
                continue
            database = paths[0]
            before = {e.native_id: e for e in self.known.entries.values() if e.paths[:1] == (database,)}
            if not any(self._changed(path) for path in paths):
                entries.update((entry.session_id, entry) for entry in before.values())
                continue
            known = {native_id: entry.version for native_id, entry in before.items()}
            try:
                listed = listing.sessions(self.root, files, known)
            except (ForeignSourceError, OSError) as error:
                self._refuse(database, error)  # read again at the next walk; its sessions stay as they were
                self.result.problem = getattr(error, "message", None) or str(error)
                for path in paths:
                    self._rows.pop(path, None)
                entries.update((entry.session_id, entry) for entry in before.values())
                continue
            for path in paths:
                info = self._found[path]
                self._rows[path] = ForeignFile(
                    path, self.source.kind, self.source.root, None, info.st_size, info.st_mtime_ns, "{}"
                )
            for native_id in listed.unchanged:
                if (entry := before.get(native_id)) is not None:
                    entries[entry.session_id] = entry
            for summary in listed.changed:
                entries[summary.session_id] = _entry(self.source, summary, self._rows)
        return entries
