"""A reader for the agents that keep one JSONL file per session: the shared walk, scan, summary and read.

`SessionFileReader` is a `SourceReader` assembled from a `SessionFormat` (what one agent's
records mean: its scan state and its conversation) and a walk. Scans are `SessionScan`s: the
resumable `FileScan` plus what every such format finds (a title the tool gave, the first prompt,
whether there is any conversation, whether the tool hides the session). A file without a line of
conversation, and a session the tool hides from its own list (a sub-agent's), is not a session.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from sessionref.contract.events import SurfaceEvent
from sessionref.contract.titles import normalize_title
from sessionref.sources.foreign import (
    ForeignSession,
    ForeignSummary,
    build_snapshot,
    foreign_session_id,
    is_valid_native_id,
)
from sessionref.sources.lines import open_inside, read_records
from sessionref.sources.reader import SessionFiles, WalkContext
from sessionref.sources.registry import SourceInfo
from sessionref.sources.scan import FileScan, scan_file

__all__ = [
    "PLACEHOLDER_TITLES",
    "Conversation",
    "SessionFileReader",
    "SessionFormat",
    "SessionScan",
    "tool_title",
]

PLACEHOLDER_TITLES = ("new session", "untitled session", "untitled", "new chat", "new conversation")
"""Titles a tool gives before it knows better ("New session - 2026-…"): they count as no title."""


def tool_title(value: object) -> str | None:
    """A title a tool wrote, normalised; None for none or a placeholder ("New session - …")."""
    title = normalize_title(value)
    if title is None:
        return None
    lowered = title.lower()
    if any(lowered == word or lowered.startswith(f"{word} - ") for word in PLACEHOLDER_TITLES):
        return None
    return title


@dataclass(slots=True)
class SessionScan(FileScan):
    """The discovery state of one session file: `FileScan` plus what every one-file format finds."""

    named: str | None = None
    """The title the tool gave the session (a rename, a summary), normalised; None: none."""
    prompt: str | None = None
    """The title of the first prompt (the fallback)."""
    native_id: str | None = None
    """The session id the records carry, when they carry one."""
    conversation: bool = False
    """Whether a user or assistant record was met."""
    hidden: bool = False
    """Whether the tool hides this session from its own list (a sub-agent's)."""

    def summary(self, kind: str, native_id: str, cwd: str | None) -> ForeignSummary:
        """The discovery facts (times fall back to the file's mtime; title: named, else first prompt)."""
        fallback = max(0, self.mtime_ns // 1_000_000)
        created = self.created_at if self.created_at is not None else fallback
        return ForeignSummary(
            session_id=foreign_session_id(kind, native_id),
            source_kind=kind,
            native_id=native_id,
            cwd=cwd if cwd is not None else self.cwd,
            created_at=created,
            updated_at=max(created, self.updated_at if self.updated_at is not None else created),
            title=self.named or self.prompt,
            paths=(Path(self.path),),
        )


class Conversation(Protocol):
    """What one read of a session file builds: its projectable events, record by record."""

    def take(self, number: int, record: dict[str, Any]) -> None:
        """Fold one record (its 1-based line number is its seq)."""
        ...

    def events(self) -> list[SurfaceEvent]:
        """The surface events of the conversation as read so far."""
        ...


class SessionFormat(Protocol):
    """What one agent's session records mean."""

    scan_type: type[SessionScan]

    def native_id(self, path: Path, scan: SessionScan) -> str | None:
        """The session's id (from its path or its records), None when it has none yet."""
        ...

    def conversation(self) -> Conversation:
        """A fresh conversation builder."""
        ...


class SessionFileReader:
    """A `SourceReader` over one-file-per-session histories: a walk plus a `SessionFormat`."""

    title_index = None
    database = None

    def __init__(
        self,
        info: SourceInfo,
        session_format: SessionFormat,
        *,
        default_root: Callable[[Mapping[str, str] | None, Path | None], Path],
        walk: Callable[[Path], Iterable[Path]],
        folder_cwd: Callable[[Path, WalkContext], str | None] | None = None,
    ) -> None:
        self.info = info
        self._folder_cwd = folder_cwd
        """The session's cwd from where its file is, when its records name none (Cursor's agent
        transcripts: the project folder matched against the known folders)."""
        self.format = session_format
        self.scan_type: type[FileScan] = session_format.scan_type
        self._default_root = default_root
        self._walk = walk

    def default_root(self, env: Mapping[str, str] | None = None, home: Path | None = None) -> Path:
        """Where the agent keeps its histories."""
        return self._default_root(env, home)

    def walk(self, root: Path) -> Iterable[SessionFiles]:
        """Every session file, one per session."""
        for path in self._walk(root):
            yield SessionFiles(None, (path,))

    def scan(self, root: Path, path: Path, previous: FileScan | None) -> SessionScan:
        """The resumable discovery scan of one session file."""
        kind = self.format.scan_type
        return scan_file(root, path, previous if isinstance(previous, kind) else None, kind)

    def summarize(
        self, root: Path, native_id: str | None, scans: Sequence[FileScan], context: WalkContext
    ) -> ForeignSummary | None:
        """The file's discovery facts; None without conversation, for a hidden session or without an id."""
        (scan,) = scans
        if not isinstance(scan, SessionScan) or not scan.conversation or scan.hidden:
            return None
        found = self.format.native_id(Path(scan.path), scan)
        if not is_valid_native_id(found) or found is None:
            return None
        cwd = (
            None
            if scan.cwd is not None or self._folder_cwd is None
            else self._folder_cwd(Path(scan.path), context)
        )
        return scan.summary(self.info.kind, found, cwd)

    def read(self, root: Path, native_id: str, paths: Sequence[Path]) -> ForeignSession:
        """The session file read in full; raises `ForeignSourceError` when it cannot be opened safely."""
        path = paths[0]
        handle, info = open_inside(root, path)
        scan = self.format.scan_type(path=str(path), size=info.st_size, mtime_ns=info.st_mtime_ns)
        conversation = self.format.conversation()

        def take(number: int, record: dict[str, Any]) -> None:
            scan.note(number, record)
            conversation.take(number, record)

        with handle:
            read = read_records(handle, take)
        summary = scan.summary(self.info.kind, native_id, None)
        return ForeignSession(
            summary=summary,
            snapshot=build_snapshot(summary, conversation.events()),
            skipped_lines=len(read.skipped) + (1 if read.pending else 0),
            lines_read=read.lines_read,
            skipped_at=tuple(read.skipped),
        )
