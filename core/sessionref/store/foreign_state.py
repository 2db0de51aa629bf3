"""What the store keeps about other agents' histories: the roots it reads, their files and sessions.

Claude Code, Codex CLI and Gemini CLI sessions (`sessionref.sources`) live in the same discovery
index as the store's own logs, in two tables of their own (`foreign_index`):

* a `ForeignFile` per history file: its source, the root it was found under, the session it
  belongs to, the size and mtime it was scanned at and the reader's resumable scan state (JSON),
  so a file that grew is read only from where the last scan stopped;
* a `ForeignEntry` per session: what discovery needs (id, cwd, created/updated, title) and where
  to read it (the file paths, in reading order), plus a `version` that changes with its files.

Paths are absolute and kept as found under the root as configured (the root itself may be a
symbolic link, like the store root); `inside_root` is the lexical check an index row must pass
before it is used. Nothing here touches the disk.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from sessionref.sources import SOURCE_NAMES, SourceKind

__all__ = ["ForeignEntry", "ForeignFile", "ForeignRoot", "file_version", "inside_root", "root_text"]

VERSION_SEPARATOR: Final = ";"
"""Between the `size:mtime` parts of a session's `version` (one part per file, in reading order)."""


def root_text(root: Path | str) -> str:
    """The root as the index stores it: absolute, `~` expanded, normalised, symlinks *not* resolved."""
    return os.path.normpath(os.path.abspath(os.path.expanduser(os.fspath(root))))


def inside_root(path: object, root: str) -> bool:
    """Whether `path` is an absolute, normalised path strictly below `root` (a lexical check)."""
    return (
        isinstance(path, str)
        and "\x00" not in path
        and os.path.isabs(path)
        and os.path.normpath(path) == path
        and path.startswith(root.rstrip(os.sep) + os.sep)
    )


def file_version(size: int, mtime_ns: int) -> str:
    """One file's part of a session `version`."""
    return f"{size}:{mtime_ns}"


@dataclass(frozen=True, slots=True)
class ForeignRoot:
    """One source the store reads: its kind and its root folder (see `root_text`)."""

    kind: SourceKind
    root: str

    @classmethod
    def of(cls, kind: SourceKind, root: Path | str) -> ForeignRoot:
        """The source `kind` read from `root` (made absolute and normalised)."""
        return cls(kind, root_text(root))

    @property
    def name(self) -> str:
        """What the source is called in messages ("Claude Code")."""
        return SOURCE_NAMES[self.kind]


@dataclass(frozen=True, slots=True)
class ForeignFile:
    """One history file as last scanned (`scan`: the reader's `FileScan.to_json()` as JSON text).

    `session_id` is None for a file that is not a session (yet): a Gemini file without its
    metadata line, or Codex's `session_index.jsonl` (the rename index).
    """

    path: str
    kind: SourceKind
    root: str
    session_id: str | None
    size: int
    mtime_ns: int
    scan: str


@dataclass(frozen=True, slots=True)
class ForeignEntry:
    """One foreign session as discovery lists it and as the store reads it (read-only).

    Times are epoch ms; `title` is already normalised (None: no title); `paths` are its files
    in reading order; `version` changes whenever one of them does (`size:mtime` per file).
    """

    session_id: str
    kind: SourceKind
    root: str
    native_id: str
    cwd: str | None
    created_at: int
    updated_at: int
    title: str | None
    paths: tuple[str, ...]
    version: str

    @property
    def label_title(self) -> str | None:
        """The title discovery shows (the catalogue reads it like a log's)."""
        return self.title

    @property
    def source(self) -> ForeignRoot:
        """The source this session was found in."""
        return ForeignRoot(self.kind, self.root)
