"""The in-memory catalogue of a store root: every log's `LogState`, sessions by id, list order.

It walks `<root>/<project>/<session>/session.jsonl[.zstd]`, catches logs up incrementally,
persists what changed to the discovery index and resolves duplicate ids deterministically.
The walk enters real folders only: a symbolic link (or a folder whose name is not valid UTF-8)
is skipped with one warning. Sessions are ordered by last activity (newest event first).
Other agents' sessions (`foreign`: Claude Code, Codex CLI, Gemini CLI) are listed and searched
with the logs' sessions; they are kept by `foreign_catalog` and handed in as `ForeignEntry`s.
Their ids (`claude-code:…`) can never be a log's (a log with such an id is skipped).
Callers hold the store lock around every method except `walk`.
"""

from __future__ import annotations

import bisect
import heapq
import logging
import os
import stat
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path

from sessionref.service.protocols import Progress, SessionRecord
from sessionref.store.errors import STORE_SESSION_NOT_FOUND, STORE_UNREADABLE, StoreError, shown_id
from sessionref.store.first_scan import scan_new_folders
from sessionref.store.foreign_state import ForeignEntry
from sessionref.store.index import DiscoveryIndex
from sessionref.store.layout import LOG_NAME, ZSTD_LOG_NAME, decode_session_segment, encode_session_segment
from sessionref.store.logfile import is_compressed
from sessionref.store.paths import is_link, valid_segment
from sessionref.store.scan import LogState, scan_log
from sessionref.store.search import OVERLAY_LIMIT, CandidateIndex, sort_key

log = logging.getLogger("sessionref.store")

_WINDOWS = os.name == "nt"  # junctions are reparse points that `is_symlink` does not report
PROGRESS_EVERY = 250


def _entries(path: Path | str, refused: list[str]) -> list[os.DirEntry[str]]:
    """Sub-folders of `path` the walk enters, by name; links and undecodable names go to `refused`."""
    try:
        with os.scandir(path) as listing:
            entries = sorted(listing, key=lambda entry: entry.name)
    except OSError as error:
        refused.append(f"cannot list {path}: {error.strerror or error}")
        return []
    kept: list[os.DirEntry[str]] = []
    for entry in entries:
        if entry.name.startswith("."):
            continue
        try:
            if entry.is_symlink() or (_WINDOWS and is_link(entry.stat(follow_symlinks=False))):
                if entry.is_dir():
                    refused.append(f"not following the symbolic link {entry.path!r} below the store root")
                continue
            if not entry.is_dir(follow_symlinks=False):
                continue
        except OSError:
            continue
        if not valid_segment(entry.name):
            refused.append(f"skipping the folder {entry.path!r}: its name is not valid UTF-8")
            continue
        kept.append(entry)
    return kept


_MAX_PROBED_ID_CHARS = 1024


def _unreadable_session_folder(root: Path, session_id: str) -> str | None:
    """Why the folder of `session_id` (in any project folder) cannot be listed, or None.

    Only asked when an id is not in the catalogue, so one listing of the root is cheap enough.
    """
    if len(session_id) > _MAX_PROBED_ID_CHARS:
        return None  # no folder name is this long
    try:
        segment = encode_session_segment(session_id)
    except StoreError:  # an empty id, or one no folder name can hold
        return None
    if not valid_segment(segment):
        return None
    for project in _entries(root, []):
        folder = os.path.join(project.path, segment)
        try:
            if not stat.S_ISDIR(os.lstat(folder).st_mode):
                continue
            with os.scandir(folder):
                pass
        except FileNotFoundError:
            continue
        except OSError as error:
            return str(error.strerror or error)
    return None


def _session_dirs(root: Path, refused: list[str]) -> Iterator[str]:
    """Relative `project/session` folder paths under `root` (hidden entries, links and files skipped)."""
    for project in _entries(root, refused):
        for session in _entries(project.path, refused):
            yield f"{project.name}/{session.name}"


def _plain_folder(path: str) -> bool:
    """Whether `path` is a folder the walk enters: not hidden, no link, a valid name (False: missing)."""
    name = os.path.basename(path)
    if name.startswith(".") or not valid_segment(name):
        return False
    try:
        status = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(status.st_mode) and not is_link(status)


def _session_dirs_in(root: Path, scopes: Collection[str], refused: list[str]) -> Iterator[str]:
    """The `project/session` folders inside `scopes` (`project` or `project/session` folder paths)."""
    projects = {scope for scope in scopes if "/" not in scope}
    for scope in sorted(scopes):
        project, _, session = scope.partition("/")
        if not _plain_folder(os.path.join(root, project)):
            continue
        if not session:
            for entry in _entries(os.path.join(root, project), refused):
                yield f"{project}/{entry.name}"
        elif project not in projects and _plain_folder(os.path.join(root, project, session)):
            yield scope


def _in_scopes(path: str, scopes: Collection[str]) -> bool:
    """Whether the log at `path` (`project/session/<log>`) lies in one of `scopes`."""
    project, _, rest = path.partition("/")
    return project in scopes or f"{project}/{rest.partition('/')[0]}" in scopes


def _reporter(progress: Progress | None, total: int) -> Callable[[int], None]:
    """`progress(done, total)` every `PROGRESS_EVERY` folders and once at the end (never for 0)."""
    if progress is None or total == 0:
        return lambda done: None
    reported = progress
    last = 0

    def report(done: int) -> None:
        nonlocal last
        if done == total or done // PROGRESS_EVERY > last // PROGRESS_EVERY:
            last = done
            reported(done, total)

    return report


def _record(state: LogState | ForeignEntry) -> SessionRecord:
    return SessionRecord(state.session_id or "", state.created_at, state.cwd, state.updated_at)


def _label(state: LogState | ForeignEntry) -> str:
    title = state.label_title
    return title if title is not None else state.session_id or ""


def _preference(state: LogState) -> tuple[int, int, str]:
    folder = state.path.rsplit("/", 2)[-2]
    canonical = decode_session_segment(folder) == state.session_id
    return (0 if canonical else 1, 1 if is_compressed(state.path) else 0, state.path)


@dataclass(slots=True)
class Walk:
    """What one walk of the root found: changed or new logs (before, after), vanished ones, refusals."""

    changes: list[tuple[LogState | None, LogState]]
    gone: list[LogState]
    refused: list[str]


class Catalog:
    """Sessions known under one root, kept in step with the files and the discovery index."""

    def __init__(self, root: Path, index: DiscoveryIndex) -> None:
        self.root = root
        self._root_text = os.fspath(root)
        self.index = index
        self.states: dict[str, LogState] = index.load()
        index.all_states = lambda: list(self.states.values())
        self.by_id: dict[str, LogState] = {}
        self.foreign: dict[str, ForeignEntry] = {}
        """Other agents' sessions by id (never one of `by_id`'s ids)."""
        self._records: list[SessionRecord] | None = None
        self._candidates: CandidateIndex | None = None
        self._recent: tuple[int, list[str]] | None = None
        """`recent_files`' last answer and its limit, until the next change of the sessions."""
        self._reported: set[str] = set()

    def walk(
        self,
        known: dict[str, LogState],
        progress: Progress | None = None,
        scopes: Collection[str] | None = None,
    ) -> Walk:
        """Scan the root against `known` (a snapshot of `states`) without changing the catalogue.

        `scopes` (relative `project` or `project/session` folders) narrows the walk to them: only
        their logs are scanned, and only theirs can be gone. Safe to run without the store lock: it
        only reads files and the snapshot it is given.
        """
        seen: set[str] = set()
        changes: list[tuple[LogState | None, LogState]] = []
        refused: list[str] = []
        new_folders: list[str] = []
        folders = (
            _session_dirs(self.root, refused)
            if scopes is None
            else _session_dirs_in(self.root, scopes, refused)
        )
        for folder in folders:
            plain, packed = f"{folder}/{LOG_NAME}", f"{folder}/{ZSTD_LOG_NAME}"
            if plain not in known and packed not in known:
                new_folders.append(folder)
                continue
            # A known log costs one stat; the other name is only tried when it is gone (DSH may
            # compress a finished session).
            first = [path for path in (plain, packed) if path in known]
            if not self._scan_paths(first, known, seen, changes):
                others = [path for path in (plain, packed) if path not in known]
                self._scan_paths(others, known, seen, changes)
        # Folders seen for the first time (all of them in a first indexing): on every core.
        for state in scan_new_folders(self._root_text, new_folders, _reporter(progress, len(new_folders))):
            seen.add(state.path)
            changes.append((None, state))
        gone = [
            state
            for path, state in known.items()
            if path not in seen and (scopes is None or _in_scopes(path, scopes))
        ]
        return Walk(changes, gone, refused)

    def apply_walk(self, walk: Walk) -> None:
        """Apply a finished `walk`; a log changed meanwhile by this store keeps its newer state."""
        for message in walk.refused:
            self._report(message, message)
        changes: list[tuple[LogState | None, LogState | None]] = []
        for before, after in walk.changes:
            if self.states.get(after.path) is before:
                self.states[after.path] = after
                changes.append((before, after))
        gone: list[str] = []
        for state in walk.gone:
            if self.states.get(state.path) is state:
                del self.states[state.path]
                gone.append(state.path)
                changes.append((state, None))
        self.index.save([after for _, after in changes if after is not None])
        self.index.delete(gone)
        self._apply_all(changes)

    def _scan_paths(
        self,
        paths: list[str],
        known: dict[str, LogState],
        seen: set[str],
        changes: list[tuple[LogState | None, LogState]],
    ) -> bool:
        found = False
        root = self._root_text
        for relative in paths:
            previous = known.get(relative)
            state = scan_log(root, relative, previous)
            if state is None:
                continue
            found = True
            seen.add(relative)
            if state is not previous:
                changes.append((previous, state))
        return found

    def rescan(self, state: LogState) -> LogState | None:
        """Catch one log up (after an append); None if its file vanished."""
        state = self.states.get(state.path, state)  # a refresh may have moved it on meanwhile
        updated = scan_log(self.root, state.path, state)
        if updated is None:
            self.states.pop(state.path, None)
            self.index.delete([state.path])
        elif updated is not state:
            self.states[updated.path] = updated
            self.index.save([updated])
        if updated is not state:
            self._apply_all([(state, updated)])
        return updated

    def add(self, state: LogState) -> None:
        """Register a log written by this store."""
        self.states[state.path] = state
        self.index.save([state])
        self._apply_all([(None, state)])

    def remove(self, state: LogState) -> None:
        """Forget a deleted log."""
        self.states.pop(state.path, None)
        self.index.delete([state.path])
        self._apply_all([(state, None)])

    def _apply_all(self, changes: list[tuple[LogState | None, LogState | None]]) -> None:
        if not changes:
            return
        self._recent = None
        if not all(self._apply(before, after) for before, after in changes):
            self.rebuild_ids()
        elif self._candidates is not None and self._candidates.overlay_size > OVERLAY_LIMIT:
            self._candidates = None

    def _apply(self, before: LogState | None, after: LogState | None) -> bool:
        """Apply one change to the id map, list order and search in place; False if a rebuild is needed."""
        if after is not None and after.problem is not None and before is None:
            self._report(after.path, f"skipping {after.path}: {after.problem}")
            return True
        if before is not None and after is not None:
            session_id = before.session_id
            same = (
                after.session_id == session_id
                and before.problem is None
                and after.problem is None
                and (before.created_at, before.cwd) == (after.created_at, after.cwd)
            )
            if not same or session_id is None:
                return False
            if self.by_id.get(session_id) is not before:
                return True
            self.by_id[session_id] = after
            if after.updated_at != before.updated_at:
                self._move(before, after)
            elif self._candidates is not None and after.label_title != before.label_title:
                self._candidates.relabel(session_id, _label(after))
            return True
        if before is None and after is not None:
            session_id = after.session_id
            if session_id is None or session_id in self.by_id:
                return False
            self.by_id[session_id] = after
            if self._records is None and self._candidates is None:
                return True  # both are built from `by_id` when next asked for
            record = _record(after)
            if self._records is not None:
                bisect.insort(self._records, record, key=sort_key)
            if self._candidates is not None:
                self._candidates.add((record, _label(after)))
            return True
        if before is not None and after is None:
            session_id = before.session_id
            if session_id is None or self.by_id.get(session_id) is not before:
                return before.problem is not None or session_id is None
            if any(state.session_id == session_id for state in self.states.values()):
                return False
            del self.by_id[session_id]
            if self._records is not None:
                self._records = [r for r in self._records if r.id != session_id]
            if self._candidates is not None:
                self._candidates.remove(session_id)
            return True
        return True

    def _move(self, before: LogState, after: LogState) -> None:
        """Put a session whose last activity changed at its new place in the list and the search."""
        record = _record(after)
        if self._records is not None:
            old = _record(before)
            at = bisect.bisect_left(self._records, sort_key(old), key=sort_key)
            if at < len(self._records) and self._records[at].id == old.id:
                del self._records[at]
                bisect.insort(self._records, record, key=sort_key)
            else:  # not where its old key says: rebuild the list when next asked
                self._records = None
        if self._candidates is not None:
            self._candidates.add((record, _label(after)))

    def rebuild_ids(self) -> None:
        """Recompute sessions by id from all states, skipping broken logs and resolving duplicates.

        Only ids stored more than once are ordered by preference (canonical folder, plain log, path).
        """
        by_id: dict[str, LogState] = {}
        contested: dict[str, list[LogState]] = {}
        for state in self.states.values():
            session_id = state.session_id
            if state.problem is not None or session_id is None:
                self._report(state.path, f"skipping {state.path}: {state.problem}")
                continue
            kept = by_id.get(session_id)
            if kept is None:
                by_id[session_id] = state
            else:
                contested.setdefault(session_id, [kept]).append(state)
        for session_id, states in contested.items():
            winner, *others = sorted(states, key=_preference)
            by_id[session_id] = winner
            for state in others:
                self._report(
                    state.path,
                    f"skipping {state.path}: id {session_id!r} is already stored in {winner.path}",
                )
        self.by_id = by_id
        self._records = None
        self._candidates = None
        self._recent = None

    def _report(self, key: str, message: str) -> None:
        if key not in self._reported:
            self._reported.add(key)
            log.warning("%s", message)

    def records(self) -> list[SessionRecord]:
        """All sessions, most recent activity first (then id ascending)."""
        if self._records is None:
            self._records = [_record(state) for state in self._ordered_states()]
        return self._records

    def recent_files(self, limit: int) -> list[str]:
        """The files (absolute) of the `limit` most recently active sessions, most recent first.

        From the ordered list when it is built; else picked without building it (`heapq.nlargest`,
        about a tenth of the cost): live discovery asks twice a second under the store lock, and
        the first whole sort of 100,000 sessions took 270 ms there, which a keystroke waited for. The
        answer is kept until the sessions change, so a quiet store costs nothing twice a second.
        """
        if self._recent is not None and self._recent[0] == limit:
            return list(self._recent[1])
        ids: list[str | None]
        if self._records is not None:
            ids = [record.id for record in self._records[:limit]]
        else:
            states: list[LogState | ForeignEntry] = [*self.by_id.values(), *self.foreign.values()]
            ids = [state.session_id for state in heapq.nlargest(limit, states, key=attrgetter("updated_at"))]
        files: list[str] = []
        for session_id in ids:
            if session_id is None:
                continue
            state = self.by_id.get(session_id)
            if state is not None:
                files.append(os.path.normpath(os.path.join(self._root_text, state.path)))
            elif (entry := self.foreign.get(session_id)) is not None:
                files.extend(entry.paths)
        self._recent = (limit, files)
        return list(files)

    def _ordered_states(self) -> list[LogState | ForeignEntry]:
        # Two stable sorts (id, then last activity descending) are cheaper than a tuple key.
        states: list[LogState | ForeignEntry] = [*self.by_id.values(), *self.foreign.values()]
        states.sort(key=attrgetter("session_id"))
        states.sort(key=attrgetter("updated_at"), reverse=True)
        return states

    def set_foreign(self, entries: dict[str, ForeignEntry]) -> None:
        """Replace every foreign session (the list and the search are rebuilt when next asked for)."""
        self.foreign = dict(entries)
        self._records = None
        self._candidates = None
        self._recent = None

    def apply_foreign(self, changes: list[tuple[ForeignEntry | None, ForeignEntry | None]]) -> None:
        """Apply foreign sessions added, changed or removed by a walk, in place where possible."""
        if not changes:
            return
        self._recent = None
        self._records = None  # rebuilt (sorted) when next asked for: a walk's changes come in batches
        candidates = self._candidates
        for before, after in changes:
            if after is None:
                removed = before is not None and self.foreign.pop(before.session_id, None) is not None
                if removed and candidates is not None and before is not None:
                    candidates.remove(before.session_id)
                continue
            self.foreign[after.session_id] = after
            if candidates is None:
                continue
            moved = before is None or (before.updated_at, before.created_at, before.cwd) != (
                after.updated_at,
                after.created_at,
                after.cwd,
            )
            if moved:
                candidates.add((_record(after), _label(after)))
            elif before is not None and before.title != after.title:
                candidates.relabel(after.session_id, _label(after))
        if candidates is not None and candidates.overlay_size > OVERLAY_LIMIT:
            self._candidates = None

    def candidates(self) -> CandidateIndex:
        """The search structure over (record, label), rebuilt lazily after changes."""
        if self._candidates is None:
            states = self._ordered_states()
            self._candidates = CandidateIndex.from_columns(
                [state.session_id or "" for state in states],
                [state.created_at for state in states],
                [state.cwd for state in states],
                [_label(state) for state in states],
                [state.updated_at for state in states],
            )
        return self._candidates

    def require(self, session_id: str) -> LogState:
        """The state of a listed session or `StoreError(STORE_SESSION_NOT_FOUND)`.

        A session whose folder is there but cannot be read is `STORE_UNREADABLE`, not "not found".
        """
        state = self.by_id.get(session_id) if isinstance(session_id, str) else None
        if state is None:
            unreadable = (
                _unreadable_session_folder(self.root, session_id) if isinstance(session_id, str) else None
            )
            if unreadable is not None:
                raise StoreError(
                    STORE_UNREADABLE,
                    f'the folder of session "{shown_id(session_id)}" cannot be read ({unreadable})',
                )
            raise StoreError(STORE_SESSION_NOT_FOUND, f'session "{shown_id(session_id)}" not found')
        return state
