"""Read-only readers for other agents' session histories, one module per source.

Pure and toolkit-free: standard library plus the contract's pure modules. Nothing here
writes anywhere; every file is opened read-only, inside its source root (SQLite databases
through `sessionref.sources.sqlite_snapshot`, which never creates a `-wal` or `-shm`).

The sources are listed once, in `sessionref.sources.registry.SOURCES` (name, two-letter mark,
reader); nothing else names a source. Each reader module exposes `READER`, a
`sessionref.sources.reader.SourceReader`: where the agent keeps its histories
(`default_root`), how to list them cheaply (`walk`), the resumable discovery scan of one file
(`scan`) and a session's facts from its scans (`summarize`), and one session in full as a
`ForeignSession` (`read`: summary plus a projectable surface snapshot); a database source also
says how to list the sessions inside it (`database`). docs/sources/<agent>.md describes each format.

The names below load on first use (`sessionref.lazy_exports`): the app marks rows with
`source_kind_of` before its first frame without loading any reader.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sessionref.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from sessionref.sources import claude_code, codex, gemini
    from sessionref.sources.foreign import (
        SOURCE_KINDS,
        SOURCE_NAMES,
        ForeignSession,
        ForeignSourceError,
        ForeignSourceErrorCode,
        ForeignSummary,
        SourceKind,
        foreign_session_id,
        parse_foreign_session_id,
        source_kind_of,
    )
    from sessionref.sources.scan import FileScan

__all__ = [
    "SOURCE_KINDS",
    "SOURCE_NAMES",
    "FileScan",
    "ForeignSession",
    "ForeignSourceError",
    "ForeignSourceErrorCode",
    "ForeignSummary",
    "SourceKind",
    "claude_code",
    "codex",
    "default_roots",
    "foreign_session_id",
    "gemini",
    "parse_foreign_session_id",
    "source_kind_of",
]

_PUBLIC: dict[str, tuple[str, ...]] = {
    "sessionref.sources.foreign": (
        "SOURCE_KINDS",
        "SOURCE_NAMES",
        "ForeignSession",
        "ForeignSourceError",
        "ForeignSourceErrorCode",
        "ForeignSummary",
        "SourceKind",
        "foreign_session_id",
        "parse_foreign_session_id",
        "source_kind_of",
    ),
    "sessionref.sources.scan": ("FileScan",),
}
_READERS = ("claude_code", "codex", "gemini")

_names_getattr, _names_dir = lazy_exports(__name__, _PUBLIC, globals())


def __getattr__(name: str) -> Any:
    if name in _READERS:
        return importlib.import_module(f"{__name__}.{name}")  # the import system binds it here too
    return _names_getattr(name)


def __dir__() -> list[str]:
    return sorted({*_names_dir(), *_READERS})


def default_roots(env: Mapping[str, str] | None = None, home: Path | None = None) -> dict[SourceKind, Path]:
    """The default root of every registered source (whether or not it exists)."""
    from sessionref.sources.registry import SOURCES

    return {info.kind: info.reader().default_root(env, home) for info in SOURCES}
