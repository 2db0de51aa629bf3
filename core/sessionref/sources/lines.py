"""Reading other programs' JSONL files safely: inside a root, read-only, whole lines only, bounded memory.

* `open_inside` opens a path only if it resolves (symlinks followed) to a regular file inside
  the source root; it never creates, truncates or locks anything, and never blocks on a FIFO.
  Resolving and opening are two steps: a link swapped in between could still be followed.
  That race is accepted: we only ever read, and only what the user running us may read.
* `LineReader` streams the complete lines of a file from a byte offset in fixed-size chunks.
  A line is complete when its `\\n` has been written: a last line without one is *pending*
  (another program may be writing it) and is neither consumed nor parsed; a later scan picks
  it up from the same offset. A line longer than `MAX_LINE_BYTES` is skipped without being held.
* `parse_record` turns one line into a JSON object, or None for anything else (bad UTF-8,
  bad JSON, nesting too deep, a JSON value that is not an object, a blank line).
* `read_records` reads a whole file that way, as every source's `read_session` does.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, BinaryIO, Final

from sessionref.contract.options import MAX_SAFE_INTEGER
from sessionref.sources.foreign import ForeignSourceError, ForeignSourceErrorCode

__all__ = [
    "MAX_LINE_BYTES",
    "READ_CHUNK_BYTES",
    "UTF8_BOM",
    "LineReader",
    "RecordsRead",
    "fingerprint",
    "is_inside",
    "open_inside",
    "parse_record",
    "parse_timestamp",
    "read_records",
    "read_small_text",
]

# Bytes read per system call while streaming a file: large enough for throughput, small
# enough that a scan of a huge log never holds more than this plus one line.
READ_CHUNK_BYTES: Final = 1 << 20
# A single line above this size (a pasted image, a giant tool result) is skipped and counted,
# never held in memory: nothing a reference can show lives in such a line.
MAX_LINE_BYTES: Final = 64 << 20
# How much of a file's start and of the bytes before a resume offset `fingerprint` hashes.
FINGERPRINT_WINDOW_BYTES: Final = 256
UTF8_BOM: Final = b"\xef\xbb\xbf"
"""The byte order mark some tools write at the start of a UTF-8 file (skipped, never parsed)."""
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_MILLISECOND: Final = timedelta(milliseconds=1)
_OPEN_FLAGS: Final = (
    os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
)


def is_inside(path: str, root: str) -> bool:
    """True when the resolved `path` is `root` or below it (both already resolved with realpath)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def open_inside(root: Path, path: Path) -> tuple[BinaryIO, os.stat_result]:
    """Open `path` read-only if it resolves to a regular file inside `root`; return it and its stat.

    Raises `FOREIGN_SOURCE_OUTSIDE_ROOT` when a symlink leads out of the root, and
    `FOREIGN_SOURCE_UNREADABLE` when it is missing, not a regular file, or cannot be opened.
    """
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    if not is_inside(real, real_root):
        raise ForeignSourceError(
            ForeignSourceErrorCode.OUTSIDE_ROOT, f"{str(path)!r} resolves outside the source root"
        )
    try:
        descriptor = os.open(real, _OPEN_FLAGS)
    except OSError as error:
        raise ForeignSourceError(
            ForeignSourceErrorCode.UNREADABLE, f"cannot open {str(path)!r}: {error.strerror or error}"
        ) from error
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise ForeignSourceError(
                ForeignSourceErrorCode.UNREADABLE, f"{str(path)!r} is not a regular file"
            )
        if hasattr(os, "set_blocking"):
            os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb", buffering=0), info
    except BaseException:
        os.close(descriptor)
        raise


def read_small_text(root: Path, path: Path, limit: int) -> str | None:
    """The text of a small file inside `root` (at most `limit` bytes, UTF-8), or None if unusable."""
    try:
        handle, info = open_inside(root, path)
    except ForeignSourceError:
        return None
    with handle:
        if info.st_size > limit:
            return None
        try:
            return handle.read(info.st_size + 1)[:limit].decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None


def fingerprint(handle: BinaryIO, offset: int) -> str:
    """A short hash of a file's first bytes and of the bytes just before `offset`.

    A resumed scan compares it with the stored one: a file that was replaced or rewritten
    (not merely appended to) almost surely differs in one of the two windows.
    """
    digest = hashlib.blake2b(digest_size=12)
    handle.seek(0)
    digest.update(handle.read(min(offset, FINGERPRINT_WINDOW_BYTES)))
    tail_start = max(0, offset - FINGERPRINT_WINDOW_BYTES)
    handle.seek(tail_start)
    digest.update(handle.read(offset - tail_start))
    return digest.hexdigest()


class LineReader:
    """Iterate `(line number, raw bytes or None)` over the complete lines of `handle` from `offset`.

    `raw` excludes the `\\n` (and a UTF-8 BOM at the start of the file); it is None for a line
    longer than `MAX_LINE_BYTES`. While a line is yielded, `line_start` is its byte offset.
    After iteration, `offset` and `line_number` describe the end of the last complete line
    and `pending_bytes` the incomplete tail after it.
    """

    def __init__(
        self,
        handle: BinaryIO,
        *,
        offset: int = 0,
        line_number: int = 0,
        max_line_bytes: int = MAX_LINE_BYTES,
        chunk_bytes: int = READ_CHUNK_BYTES,
    ) -> None:
        self._handle = handle
        self.offset = offset
        self.line_start = offset
        self.line_number = line_number
        self.pending_bytes = 0
        self._max = max_line_bytes
        self._chunk = chunk_bytes

    def __iter__(self) -> Iterator[tuple[int, bytes | None]]:
        self._handle.seek(self.offset)
        pieces: list[bytes] = []
        held = 0  # bytes of the current line seen so far (held in `pieces` unless oversized)
        oversized = False
        while chunk := self._handle.read(self._chunk):
            start = 0
            while (newline := chunk.find(b"\n", start)) >= 0:
                length = held + newline - start
                raw: bytes | None = None
                if not oversized and length <= self._max:
                    segment = chunk[start:newline]
                    raw = b"".join((*pieces, segment)) if pieces else segment
                    if self.offset == 0 and raw.startswith(UTF8_BOM):
                        raw = raw[len(UTF8_BOM) :]
                self.line_start = self.offset
                self.offset += length + 1
                self.line_number += 1
                pieces, held, oversized = [], 0, False
                start = newline + 1
                yield self.line_number, raw
            rest = len(chunk) - start
            held += rest
            if not oversized:
                if held > self._max:
                    oversized, pieces = True, []
                elif rest:
                    pieces.append(chunk[start:])
        self.pending_bytes = held


def parse_record(raw: bytes | None) -> dict[str, Any] | None:
    """The JSON object on one line, or None for anything else (never raises)."""
    if not raw:
        return None
    try:
        value = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):  # bad UTF-8, bad JSON, huge numbers, deep nesting
        return None
    return value if type(value) is dict else None


@dataclass(frozen=True, slots=True)
class RecordsRead:
    """What `read_records` found besides the records: the numbers of the lines that are not a JSON
    object, how many lines it read (a pending last line counts) and whether the last was pending."""

    skipped: list[int]
    lines_read: int
    pending: bool


def read_records(handle: BinaryIO, take: Callable[[int, dict[str, Any]], None]) -> RecordsRead:
    """Every complete line of `handle` from its start: `take(number, record)` for each JSON object,
    in order; the other lines are only counted (see `RecordsRead`)."""
    reader = LineReader(handle)
    skipped: list[int] = []
    for number, raw in reader:
        record = parse_record(raw)
        if record is None:
            skipped.append(number)
            continue
        take(number, record)
    pending = reader.pending_bytes > 0
    return RecordsRead(skipped, reader.line_number + (1 if pending else 0), pending)


def parse_timestamp(value: object) -> int | None:
    """Epoch milliseconds of an ISO 8601 string (naive means UTC), or None when it is not one.

    Only instants between 1970 and the largest JavaScript safe integer are accepted (epoch
    milliseconds stay a safe integer: DSH's `createdAt` rule).
    """
    if not isinstance(value, str) or not 10 <= len(value) <= 64:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        millis = (moment - _EPOCH) // _MILLISECOND
    except OverflowError:
        return None
    return millis if 0 <= millis <= MAX_SAFE_INTEGER else None
