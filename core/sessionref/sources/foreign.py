"""What every foreign-history reader produces: ids, errors, results and DSH-shaped surface events.

A foreign session (one conversation of a source in `sessionref.sources.registry`) is served to the
reference contract as a *surface snapshot* `{"session": header, "capturedThroughSeq": N,
"events": [...]}` shaped exactly like a folded DSH log (docs/contract.md §3), so
`sessionref.contract.projection.project_session_conversation` projects it unchanged:

* direct prompts are `user/message` events with source `{"kind": "user"}`;
* answers are `assistant/message` events with source `{"kind": "model", provider, model}`;
* a compaction summary is a `user/message` checkpoint with source `{"kind": "plugin",
  "plugin": "compact", "compactionId": ...}` (docs/contract.md, decision D7) standing where the text it
  summarises was, so the projection after a compaction is [checkpoint, later messages].

Each event's `seq` is a position in the source (the 1-based line number of the record that
produced it; for several files, line numbers keep counting across the files in order), and
`capturedThroughSeq` is the highest such position among the projected events (None when
nothing is projected).

Ids are `<kind>:<native id>` (`claude-code:<uuid>`, `codex:<uuid>`, …): readable,
stable, and plain strings, so they round-trip through `dsh-session:` URIs like any DSH id.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Final

from sessionref.contract.errors import CodedError
from sessionref.contract.events import (
    AssistantMessage,
    CheckpointSource,
    ContentBlock,
    SessionHeader,
    SurfaceEvent,
    SurfaceSnapshot,
    UserMessage,
    text_block,
)
from sessionref.sources.registry import SOURCES

__all__ = [
    "SOURCE_KINDS",
    "SOURCE_NAMES",
    "ForeignSession",
    "ForeignSourceError",
    "ForeignSourceErrorCode",
    "ForeignSummary",
    "SourceKind",
    "assistant_event",
    "build_snapshot",
    "checkpoint_event",
    "foreign_session_header",
    "foreign_session_id",
    "parse_foreign_session_id",
    "source_kind_of",
    "user_event",
]

SourceKind = str
"""A registered source's kind (`sessionref.sources.registry.SOURCES`)."""
SOURCE_KINDS: Final[tuple[SourceKind, ...]] = tuple(info.kind for info in SOURCES)
SOURCE_NAMES: Final[dict[SourceKind, str]] = {info.kind: info.name for info in SOURCES}
"""What each source is called in messages."""

# The DSH session format version of the headers we synthesise (the seed era's SESSION_FORMAT_VERSION).
HEADER_FORMAT_VERSION: Final = 0
# A native id is used to find files by name: it never holds a path separator or a NUL.
_FORBIDDEN_IN_NATIVE_ID: Final = frozenset("/\\\x00")


class ForeignSourceErrorCode(StrEnum):
    """Stable codes of `ForeignSourceError`."""

    OUTSIDE_ROOT = "FOREIGN_SOURCE_OUTSIDE_ROOT"
    UNREADABLE = "FOREIGN_SOURCE_UNREADABLE"
    INVALID_SESSION = "FOREIGN_SESSION_INVALID"
    TOO_LARGE = "FOREIGN_SESSION_TOO_LARGE"
    INVALID_ID = "FOREIGN_SESSION_ID_INVALID"
    DATABASE_BUSY = "FOREIGN_DATABASE_BUSY"
    DATABASE_UNREADABLE = "FOREIGN_DATABASE_UNREADABLE"
    DATABASE_SCHEMA = "FOREIGN_DATABASE_SCHEMA_UNKNOWN"


class ForeignSourceError(CodedError):
    """A foreign history could not be read as a session; `code` is a `ForeignSourceErrorCode`.

    Malformed *lines* never raise (they are skipped and counted); this is for a file that is
    not there, not a regular file, outside its source root, too large, or has no session id.
    """

    def __init__(self, code: ForeignSourceErrorCode, message: str) -> None:
        super().__init__(code.value, message)
        self.code: ForeignSourceErrorCode = code


def foreign_session_id(kind: SourceKind, native_id: str) -> str:
    """The sessionref id of a foreign session: `<kind>:<native id>`."""
    return f"{kind}:{native_id}"


def is_valid_native_id(native_id: object) -> bool:
    """True for a non-empty id safe to look up by file name (no separator, no NUL, not `.`/`..`)."""
    return (
        isinstance(native_id, str)
        and native_id not in ("", ".", "..")
        and not _FORBIDDEN_IN_NATIVE_ID.intersection(native_id)
    )


def parse_foreign_session_id(session_id: str) -> tuple[SourceKind, str] | None:
    """`(kind, native id)` for a foreign session id, or None when `session_id` is not one.

    A known kind prefix with an unusable native id (empty, a path separator, NUL, `.`/`..`)
    raises `FOREIGN_SESSION_ID_INVALID`: it names a foreign session but no file can match it.
    """
    kind, separator, native_id = session_id.partition(":")
    if not separator or kind not in SOURCE_KINDS:
        return None
    if not is_valid_native_id(native_id):
        raise ForeignSourceError(
            ForeignSourceErrorCode.INVALID_ID, f"{kind} session id {native_id!r} is not a usable id"
        )
    return kind, native_id  # `kind in SOURCE_KINDS` narrowed it to a SourceKind


def source_kind_of(session_id: object) -> SourceKind | None:
    """The source kind a session id names by its prefix (`claude-code:…` → `"claude-code"`), else None.

    Never raises (unlike `parse_foreign_session_id`, it does not judge the native id): every id
    with a known kind prefix is reserved for that source, whatever follows the colon.
    """
    if not isinstance(session_id, str):
        return None
    kind, separator, _ = session_id.partition(":")
    if not separator:
        return None
    return kind if kind in SOURCE_KINDS else None


@dataclass(frozen=True, slots=True)
class ForeignSummary:
    """Discovery facts of one foreign session (what an index row needs; no conversation).

    Times are epoch milliseconds; `title` is already normalised (inert, one line, bounded).
    """

    session_id: str
    source_kind: SourceKind
    native_id: str
    cwd: str | None
    created_at: int
    updated_at: int
    title: str | None
    paths: tuple[Path, ...]
    version: str | None = None
    """The session's own version where its files are not (a database's update time); None: the
    store derives it from its files' sizes and mtimes."""


@dataclass(frozen=True, slots=True)
class ForeignSession:
    """One foreign session read in full: its discovery facts plus a projectable surface snapshot.

    `snapshot` is its projectable surface. `lines_read` counts every
    line met (complete ones plus an incomplete last one); `skipped_lines` those left out:
    blank, malformed (not one JSON object), oversized, and an incomplete last line.
    `skipped_at` are the positions (seqs, as events count them) of the complete lines left
    out: an incomplete last line is not there yet (another program may be writing it), so it
    is counted in `skipped_lines` but not named here.
    """

    summary: ForeignSummary
    snapshot: SurfaceSnapshot
    skipped_lines: int
    lines_read: int
    skipped_at: tuple[int, ...] = ()

    @property
    def session_id(self) -> str:
        return self.summary.session_id

    @property
    def source_kind(self) -> SourceKind:
        return self.summary.source_kind

    @property
    def cwd(self) -> str | None:
        return self.summary.cwd

    @property
    def created_at(self) -> int:
        return self.summary.created_at

    @property
    def updated_at(self) -> int:
        return self.summary.updated_at

    @property
    def title(self) -> str | None:
        return self.summary.title

    @property
    def paths(self) -> tuple[Path, ...]:
        return self.summary.paths


def _text_content(texts: Sequence[str]) -> list[ContentBlock]:
    return [text_block(text) for text in texts]


def user_event(seq: int, time: int, message_id: str, texts: Sequence[str]) -> SurfaceEvent:
    """A DSH `user/message` surface event for a direct prompt made of `texts` (one text block each)."""
    data: UserMessage = {
        "source": {"kind": "user"},
        "content": _text_content(texts),
        "role": "user",
        "id": message_id,
    }
    return {"type": "user/message", "seq": seq, "time": time, "data": data, "surfaceOp": "append"}


def checkpoint_event(
    seq: int, time: int, message_id: str, compaction_id: str, texts: Sequence[str]
) -> SurfaceEvent:
    """A DSH compaction checkpoint (decision D7): a `user/message` from `{kind: plugin, plugin: compact}`."""
    source: CheckpointSource = {"kind": "plugin", "plugin": "compact", "compactionId": compaction_id}
    data: UserMessage = {"source": source, "content": _text_content(texts), "role": "user", "id": message_id}
    return {"type": "user/message", "seq": seq, "time": time, "data": data, "surfaceOp": "append"}


def assistant_event(
    seq: int, time: int, message_id: str, texts: Sequence[str], provider: str, model: str
) -> SurfaceEvent:
    """A DSH `assistant/message` surface event carrying the answer's text blocks only."""
    message: AssistantMessage = {
        "id": message_id,
        "role": "assistant",
        "content": _text_content(texts),
        "source": {"kind": "model", "provider": provider, "model": model},
    }
    return {
        "type": "assistant/message",
        "seq": seq,
        "time": time,
        "data": {"message": message},
        "surfaceOp": "append",
    }


def build_snapshot(summary: ForeignSummary, events: list[SurfaceEvent]) -> SurfaceSnapshot:
    """The surface snapshot `{session, capturedThroughSeq, events}` of a foreign session.

    The header is DSH-shaped (`type`, `version`, `id`, `createdAt`, `cwd` only when known,
    `delegationDepth` 0); `capturedThroughSeq` is the highest event seq, or None without events.
    """
    header = foreign_session_header(summary.session_id, summary.created_at, summary.cwd)
    through = max((event["seq"] for event in events), default=None)
    return {"session": header, "capturedThroughSeq": through, "events": events}


def foreign_session_header(session_id: str, created_at: int, cwd: str | None) -> SessionHeader:
    """The DSH-shaped header of a foreign session: `cwd` only when known, `delegationDepth` 0."""
    header: SessionHeader = {
        "type": "session",
        "version": HEADER_FORMAT_VERSION,
        "id": session_id,
        "createdAt": created_at,
    }
    if cwd is not None:
        header["cwd"] = cwd
    header["delegationDepth"] = 0
    return header
