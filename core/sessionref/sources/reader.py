"""What a source's reader is to the store: one small object per agent, listed in `registry.SOURCES`.

A reader is read-only and stateless (the store keeps every scan state in its index). The store
walks a root with it in three steps: `walk` lists the sessions' files cheaply (normally no
reads), `scan` runs the resumable discovery scan of one changed file (`sessionref.sources.scan`),
`summarize` turns a session's scans into its discovery facts; `read` reads one session in full
for a reference. Change is detected by each file's size and mtime. A database-backed source walks its
database as one `SessionFiles(database=True)`: only when one of its files changed does its
`database` listing open it, and then each session's change is read from the database's own
timestamps (`DatabaseSessions`), never by reading every session again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from sessionref.sources.foreign import ForeignSession, ForeignSummary
from sessionref.sources.registry import SourceInfo
from sessionref.sources.scan import FileScan

__all__ = ["DatabaseListing", "DatabaseSessions", "SessionFiles", "SourceReader", "TitleIndex", "WalkContext"]


@dataclass(frozen=True, slots=True)
class SessionFiles:
    """What `walk` found of one session: its files, and its native id when the walk knows it.

    `native_id` None: the session is that one file and its id is found by scanning it (two files
    naming one id are one session: the one with the newest activity is read).
    """

    native_id: str | None
    paths: tuple[Path, ...]
    database: bool = False
    """A database holding many sessions (its file first, then its `-wal`/`-shm`): listed by the
    reader's `database` listing, and only when one of these files changed."""


@dataclass(slots=True)
class WalkContext:
    """What one walk of a root shares between `summarize` calls: the title index, known folders, a memo."""

    names: Mapping[str, str] = field(default_factory=dict)
    """The title index's names by native id (empty without one)."""
    memo: dict[str, object] = field(default_factory=dict)
    """Per-walk cache a reader may fill (a project folder's cwd, say)."""
    known_cwds: frozenset[str] = frozenset()
    """Folders the store already knows sessions in (and the process's folder and its parents): a
    source that names a project by a hash of its folder matches them (Gemini CLI)."""


class TitleIndex(Protocol):
    """A file beside the sessions that names them (Codex's `session_index.jsonl`)."""

    scan_type: type[FileScan]

    def path(self, root: Path) -> Path:
        """Where the index file is under `root`."""
        ...

    def scan(self, root: Path, previous: FileScan | None) -> FileScan:
        """The index scanned (resuming from `previous`); a missing file scans as empty with size -1."""
        ...

    def names(self, scan: FileScan) -> dict[str, str]:
        """The names a scan of the index holds, by native id."""
        ...


@dataclass(frozen=True, slots=True)
class DatabaseSessions:
    """What a database listing found: sessions whose version is as known, and the others in full."""

    unchanged: tuple[str, ...]
    """Native ids whose version (the database's own update time) is the one the store knows."""
    changed: tuple[ForeignSummary, ...]
    """The sessions that are new or changed (each with its `version`)."""


class DatabaseListing(Protocol):
    """The sessions inside a database (`SessionFiles.database`), found by its own timestamps."""

    def sessions(self, root: Path, files: SessionFiles, known: Mapping[str, str]) -> DatabaseSessions:
        """Every session the database lists (sub-agent sessions left out); `known` maps native ids to the
        versions the store has. Raises `ForeignSourceError` (busy, unreadable, unknown schema)."""
        ...

    def linked_files(self, root: Path) -> frozenset[str]:
        """The database files outside `root` that the source's own list names (Crush's projects), each
        checked to be a regular file reached through no link; empty for a source whose databases are
        under its root. The store accepts these paths and no others outside the root
        (docs/reliability.md, "Links")."""
        ...


class SourceReader(Protocol):
    """One agent's histories, read-only."""

    info: SourceInfo
    scan_type: type[FileScan]
    """The `FileScan` subclass `scan` returns (stored scan states are loaded as it)."""
    title_index: TitleIndex | None
    database: DatabaseListing | None
    """How the sessions inside a database are listed (None: the source has no database)."""

    def default_root(self, env: Mapping[str, str] | None = None, home: Path | None = None) -> Path:
        """Where the agent keeps its histories (its own environment variable first)."""
        ...

    def walk(self, root: Path) -> Iterable[SessionFiles]:
        """Every session's files under `root`, cheaply; never follows a link out of `root`."""
        ...

    def scan(self, root: Path, path: Path, previous: FileScan | None) -> FileScan:
        """The discovery scan of one file, resuming from `previous`; raises `ForeignSourceError`."""
        ...

    def summarize(
        self, root: Path, native_id: str | None, scans: Sequence[FileScan], context: WalkContext
    ) -> ForeignSummary | None:
        """A session's discovery facts from its files' scans; None when it is not a session (yet)."""
        ...

    def read(self, root: Path, native_id: str, paths: Sequence[Path]) -> ForeignSession:
        """One session in full (summary and projectable snapshot); raises `ForeignSourceError`."""
        ...
