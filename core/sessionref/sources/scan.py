"""The resumable discovery scan shared by the readers: one file, cheap, from where the last scan stopped.

A scan answers the discovery questions (id, cwd, created/updated times, title) without
building the conversation. It streams the file's complete lines once and JSON-parses only
the lines a source says may matter (`FileScan.wants`: a few byte substrings, checked at C
speed); the rest are skipped unparsed. Its state (`FileScan` subclasses) is plain data with
`to_json`/`from_json`, so an index can store it (e.g. a JSON column in SQLite) and hand it
back: `scan_file(..., previous=state)` then

* returns `previous` itself, without opening the file, when size and mtime are unchanged;
* continues from `previous.offset` when the file only grew (same size-or-larger, and the
  same `fingerprint` of its first bytes and of the bytes before the offset), so a huge
  append-only log costs only its new lines;
* starts over otherwise (a file replaced, truncated or rewritten).

`updated_at` is the time of the last record that has one: the scan re-reads only the last
`TAIL_LINES` complete lines (by position, so huge lines are never held) to find it.
"""

from __future__ import annotations

import copy
import os
import typing
from collections import deque
from dataclasses import dataclass, fields
from pathlib import Path
from types import NoneType, UnionType
from typing import Any, BinaryIO, ClassVar, Final, Self, TypeVar

from sessionref.sources.lines import LineReader, fingerprint, open_inside, parse_record

__all__ = ["SCAN_STATE_VERSION", "TAIL_LINES", "FileScan", "scan_file"]

S = TypeVar("S", bound="FileScan")

# How many trailing lines a scan re-reads to find the newest record time.
TAIL_LINES: Final = 16
# Bumped whenever the meaning of a stored scan state changes; older states are rescanned.
SCAN_STATE_VERSION: Final = 1


@dataclass(slots=True)
class FileScan:
    """Where the scan of one file stands and what it found so far (all JSON-serialisable).

    `offset`/`lines` end at the last complete line consumed; `pending_bytes` is the size of
    an incomplete last line, left for the next scan. Times are epoch ms (None: not seen).
    """

    KIND: ClassVar[str] = ""

    path: str = ""
    size: int = -1
    mtime_ns: int = -1
    offset: int = 0
    lines: int = 0
    pending_bytes: int = 0
    fingerprint: str = ""
    created_at: int | None = None
    updated_at: int | None = None
    cwd: str | None = None

    def wants(self, raw: bytes) -> bool:
        """Whether a line must be parsed for discovery (a superset check on raw bytes)."""
        raise NotImplementedError

    def take(self, number: int, record: dict[str, Any]) -> None:
        """Fold one parsed record into the state."""
        raise NotImplementedError

    def record_time(self, record: dict[str, Any]) -> int | None:
        """The time of one record (epoch ms), or None when it has none."""
        raise NotImplementedError

    def note(self, number: int, record: dict[str, Any]) -> None:
        """`take` one record, then make its time (if any) the newest time seen."""
        self.take(number, record)
        if (moment := self.record_time(record)) is not None:
            self.updated_at = moment

    def to_json(self) -> dict[str, Any]:
        """The state as a JSON object (with `kind` and `version`), for an index to store."""
        shape: dict[str, Any] = {"kind": self.KIND, "version": SCAN_STATE_VERSION}
        for field in fields(self):
            shape[field.name] = copy.deepcopy(getattr(self, field.name))
        return shape

    @classmethod
    def from_json(cls, value: object) -> Self | None:
        """The state stored by `to_json`, or None when it is not one of this kind and version."""
        if not isinstance(value, dict) or value.get("kind") != cls.KIND:
            return None
        if value.get("version") != SCAN_STATE_VERSION:
            return None
        hints = typing.get_type_hints(cls)
        loaded: dict[str, Any] = {}
        for field in fields(cls):
            if field.name not in value or not _matches(value[field.name], hints[field.name]):
                return None
            loaded[field.name] = copy.deepcopy(value[field.name])
        return cls(**loaded)


def _matches(value: object, hint: Any) -> bool:
    """Whether a JSON value fits one of the simple field types used by scan states."""
    if isinstance(hint, UnionType):
        return any(_matches(value, option) for option in typing.get_args(hint))
    if hint is NoneType:
        return value is None
    if hint is int:
        return type(value) is int
    if hint is bool or hint is str:
        return type(value) is hint
    if typing.get_origin(hint) is list:
        (item,) = typing.get_args(hint)
        return isinstance(value, list) and all(_matches(element, item) for element in value)
    if typing.get_origin(hint) is dict:
        key_type, item = typing.get_args(hint)
        return isinstance(value, dict) and all(
            _matches(key, key_type) and _matches(element, item) for key, element in value.items()
        )
    return False


def _newest_time(handle: BinaryIO, state: FileScan, tail: deque[tuple[int, int]]) -> int | None:
    for start, end in reversed(tail):
        handle.seek(start)
        record = parse_record(handle.read(end - start))
        if record is not None and (moment := state.record_time(record)) is not None:
            return moment
    return None


def _unchanged(path: Path, previous: FileScan) -> bool:
    """Size and mtime as scanned, so `previous` holds (a stat reads nothing: no root check needed)."""
    try:
        info = os.stat(path)
    except OSError:
        return False
    return previous.size == info.st_size and previous.mtime_ns == info.st_mtime_ns


def scan_file(root: Path, path: Path, previous: S | None, fresh: type[S]) -> S:
    """Scan `path` (inside `root`) for discovery, resuming from `previous` when it only grew.

    Never modifies `previous` (a resumed scan works on a copy). Raises `ForeignSourceError`
    when the file cannot be opened safely.
    """
    if previous is not None and previous.path == str(path) and _unchanged(path, previous):
        return previous
    handle, info = open_inside(root, path)
    with handle:
        state: S | None = None
        if (
            previous is not None
            and previous.path == str(path)
            and 0 < previous.offset <= info.st_size
            and fingerprint(handle, previous.offset) == previous.fingerprint
        ):
            state = copy.deepcopy(previous)
        if state is None:
            state = fresh(path=str(path))
        reader = LineReader(handle, offset=state.offset, line_number=state.lines)
        tail: deque[tuple[int, int]] = deque(maxlen=TAIL_LINES)
        for number, raw in reader:
            if raw is None:
                continue
            tail.append((reader.offset - 1 - len(raw), reader.offset - 1))
            if state.wants(raw) and (record := parse_record(raw)) is not None:
                state.note(number, record)
        newest = _newest_time(handle, state, tail) if tail else None
        if newest is not None:
            state.updated_at = newest
        state.offset, state.lines, state.pending_bytes = (
            reader.offset,
            reader.line_number,
            reader.pending_bytes,
        )
        state.size, state.mtime_ns = info.st_size, info.st_mtime_ns
        state.fingerprint = fingerprint(handle, state.offset) if state.offset else ""
        return state


@dataclass(slots=True)
class DatabaseOnlyScan(FileScan):
    """The scan of a source whose sessions live only in a database (its `DatabaseListing` lists them):
    never filled, since no file of it is scanned line by line. A source sets its own `KIND`."""

    def wants(self, raw: bytes) -> bool:
        """No line is wanted."""
        return False

    def take(self, number: int, record: dict[str, Any]) -> None:
        """Nothing to take."""
        return None

    def record_time(self, record: dict[str, Any]) -> int | None:
        """No record has a time here."""
        return None
