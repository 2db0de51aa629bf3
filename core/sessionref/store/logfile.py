"""Reading `session.jsonl` logs (and DSH `session.jsonl.zstd`): lines, packed rows, bounded decompression.

Lines are JSON objects separated by `\\n`. A reader takes the log as it is: a final line without
its newline is simply not there yet (another process may be writing it) unless it already
parses; an unreadable line in the middle is skipped and reported by its line number
(`LogReport.skipped_lines`), so one bad line never hides a whole session. Nothing here writes.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, TypeGuard

from sessionref.contract.log_values import is_epoch_ms, is_seq
from sessionref.store.envelope import is_readable_event, readable_header
from sessionref.store.errors import (
    STORE_INVALID_LOG,
    STORE_LOG_TOO_LARGE,
    STORE_UNREADABLE,
    StoreError,
)
from sessionref.store.nesting import line_may_nest_deeper, nesting_exceeds
from sessionref.store.paths import open_log_nofollow, read_fd

PACKED_CHUNK_TYPES = frozenset({"text-chunks", "reasoning-chunks", "tool-call-chunks"})
TORN_SUFFIX = ".torn"
MAX_DECOMPRESSED_LOG_BYTES = 256 * 1024 * 1024
"""A compressed log expanding beyond this many bytes is refused (`STORE_LOG_TOO_LARGE`).

Decompression streams and stops there, so a 33 KB `.zstd` that expands to 1 GiB costs at most
this much memory (plus one read chunk) instead of the whole expansion.
"""
_DECOMPRESS_CHUNK = 1 << 20
YIELD_EVERY_LINES = 200
"""Parsing a whole log gives up the GIL this often (about every millisecond of work).

Logs are read and folded in worker threads, but parsing is pure Python: without a pause, a
thread holds the GIL for Python's whole switch interval (5 ms) at a time, and that is how long
the UI loop then waits (bench_loop_stall.py measures it). A pause costs about a microsecond.
"""


def is_compressed(path: Path | str) -> bool:
    """True for a DSH zstd log (read-only for this store)."""
    return str(path).endswith(".zstd")


def encode_line(record: dict[str, Any]) -> bytes:
    """One JSONL line (compact separators, UTF-8, trailing newline) for `record`.

    Text that cannot be UTF-8 encoded (lone surrogates) is written with JSON escapes instead,
    so the line always stays valid JSON that decodes back to the same value.
    """
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        return json.dumps(record, separators=(",", ":"), allow_nan=False).encode("ascii") + b"\n"


def decompress_bounded(source: BinaryIO, where: str, limit: int | None = None) -> bytes:
    """All zstd frames of `source`, decompressed one after another, refusing more than `limit` bytes."""
    import zstandard

    bound = MAX_DECOMPRESSED_LOG_BYTES if limit is None else limit
    chunks: list[bytes] = []
    total = 0
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(source, read_across_frames=True, closefd=False)
        while True:
            chunk = reader.read(_DECOMPRESS_CHUNK)
            if not chunk:
                return b"".join(chunks)
            total += len(chunk)
            if total > bound:
                raise StoreError(
                    STORE_LOG_TOO_LARGE,
                    f"{where} expands to more than {bound // (1024 * 1024)} MiB; it is not read",
                )
            chunks.append(chunk)
    except zstandard.ZstdError as error:
        raise StoreError(STORE_UNREADABLE, f"cannot decompress {where}: {error}") from error


def read_log_fd(fd: int, where: str, *, compressed: bool) -> bytes:
    """The decoded bytes of an opened log (`fd` is read from its position and left open)."""
    try:
        if not compressed:
            return read_fd(fd)
        with os.fdopen(os.dup(fd), "rb") as source:
            return decompress_bounded(source, where)
    except OSError as error:
        raise StoreError(STORE_UNREADABLE, f"cannot read {where}: {error.strerror or error}") from error


def read_log_bytes(path: Path | str) -> bytes:
    """The decoded bytes of the log at `path` (a symlink is refused); FileNotFoundError if it is gone."""
    where = os.path.basename(os.fspath(path))
    try:
        fd = open_log_nofollow(os.fspath(path))
    except (FileNotFoundError, StoreError):
        raise
    except OSError as error:
        raise StoreError(STORE_UNREADABLE, f"cannot read {where}: {error.strerror or error}") from error
    try:
        return read_log_fd(fd, where, compressed=is_compressed(path))
    finally:
        os.close(fd)


@dataclass(slots=True)
class SplitLines:
    """Complete lines of a byte buffer, and the unterminated tail that may be a torn write."""

    lines: list[bytes]
    consumed: int
    tail: bytes


def split_lines(data: bytes, *, base: int = 0) -> SplitLines:
    """Split `data` on newlines; `consumed` counts bytes up to and including the last newline (+ `base`)."""
    end = data.rfind(b"\n")
    if end < 0:
        return SplitLines([], base, data)
    return SplitLines(data[:end].split(b"\n"), base + end + 1, data[end + 1 :])


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
"""One decoder for every line (`json.loads` with an option builds a new one per call)."""


def _loads(line: bytes) -> Any:
    # `json.loads` of bytes first guesses the encoding from a BOM or zero bytes; a line that
    # starts with `{` and a non-zero byte is UTF-8 by that same rule, so it skips the guess.
    if line[:1] == b"{" and line[1:2] not in (b"", b"\x00"):
        return _DECODER.decode(line.decode("utf-8", "surrogatepass"))
    return json.loads(line, parse_constant=_reject_constant)


def parse_line(line: bytes) -> dict[str, Any] | None:
    """The JSON object on `line`, or None when it is not one.

    Blank lines, invalid UTF-8, `NaN`/`Infinity`, numbers too long to convert and objects nested
    deeper than `MAX_NESTING_DEPTH` all give None.
    """
    if not line.strip():
        return None
    try:
        value = _loads(line)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(value, dict):
        return None
    if line_may_nest_deeper(line) and nesting_exceeds(value):
        return None
    return value


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _packed_texts(row: dict[str, Any]) -> list[Any]:
    data = row.get("data")
    if not isinstance(data, dict):
        return []
    key = "args" if row.get("type") == "tool-call-chunks" else "texts"
    texts = data.get(key)
    return texts if isinstance(texts, list) else []


def packed_row_span(row: dict[str, Any]) -> tuple[int, int] | None:
    """(first seq, last seq) covered by a packed chunk row, or None when the row is malformed."""
    seq0 = row.get("seq0")
    texts = _packed_texts(row)
    if not is_seq(seq0) or not texts or not is_seq(seq0 + len(texts) - 1):
        return None
    return seq0, seq0 + len(texts) - 1


def packed_row_last_time(row: dict[str, Any]) -> int | None:
    """The time of the last chunk a packed row stands for, or None when the row is malformed."""
    time0 = row.get("time0")
    data = row.get("data")
    texts = _packed_texts(row)
    if not is_epoch_ms(time0) or not texts or not isinstance(data, dict):
        return None
    gaps = data.get("dt") or []
    if not isinstance(gaps, list) or not all(_is_int(gap) for gap in gaps):
        return None
    last = time0 + sum(gaps[: len(texts) - 1])
    return last if is_epoch_ms(last) else None


def expand_packed_row(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The `assistant/chunk` events one packed `*-chunks` row stands for (one per text, in seq order).

    Raises `StoreError(STORE_INVALID_LOG)` when the row is malformed.
    """
    data = row.get("data")
    span = packed_row_span(row)
    time0 = row.get("time0")
    if span is None or not isinstance(data, dict) or not is_epoch_ms(time0):
        raise StoreError(STORE_INVALID_LOG, "a packed chunk row is malformed")
    texts = _packed_texts(row)
    gaps = data.get("dt") or []
    if (
        not isinstance(gaps, list)
        or not all(_is_int(gap) for gap in gaps)
        or packed_row_last_time(row) is None
    ):
        raise StoreError(STORE_INVALID_LOG, "a packed chunk row has invalid time deltas")
    kind = row["type"]
    events: list[dict[str, Any]] = []
    time = time0
    for offset, text in enumerate(texts):
        if offset > 0 and offset - 1 < len(gaps):
            time += gaps[offset - 1]
            if not is_epoch_ms(time):
                raise StoreError(STORE_INVALID_LOG, "a packed chunk row has a time out of range")
        if kind == "tool-call-chunks":
            chunk: dict[str, Any] = {
                "type": "tool-call-delta",
                "index": data.get("index"),
                "id": data.get("id"),
                "name": data.get("name"),
                "argumentsDelta": text,
            }
        else:
            delta_type = "text-delta" if kind == "text-chunks" else "reasoning-delta"
            chunk = {"type": delta_type, "index": data.get("index"), "text": text}
        events.append(
            {
                "type": "assistant/chunk",
                "seq": span[0] + offset,
                "time": time,
                "data": {"turn": data.get("turn"), "step": data.get("step"), "chunk": chunk},
            }
        )
    return events


def record_last_seq(record: dict[str, Any]) -> int | None:
    """The last seq a log record stands for (a packed row's last chunk), or None when it has none."""
    if is_packed_row(record):
        span = packed_row_span(record)
        return span[1] if span else None
    seq = record.get("seq")
    return seq if is_seq(seq) else None


def is_packed_row(record: dict[str, Any]) -> bool:
    """True for a packed `*-chunks` row (it carries `seq0` instead of `seq`)."""
    kind = record.get("type")
    return isinstance(kind, str) and kind in PACKED_CHUNK_TYPES and "seq0" in record


def is_header(record: dict[str, Any] | None) -> bool:
    """True for a session header line: `type == "session"` and a non-empty string id."""
    return (
        record is not None
        and record.get("type") == "session"
        and isinstance(record.get("id"), str)
        and record["id"] != ""
    )


@dataclass(frozen=True, slots=True)
class LogReport:
    """A log as a reader sees it: the header, the readable events, and the lines that were skipped.

    `skipped_lines` are 1-based line numbers of lines that are not JSON objects, have an envelope
    a reader does not take (`envelope.is_readable_event`: no type, a seq or time out of range, a
    bad surfaceOp), are malformed packed rows, nest too deeply, or whose seq does not follow the
    previous readable event (e.g. a duplicate seq). `replace_lines` maps the seq of each replacing
    surface event to its line, so a replace the fold cannot apply is reported by its line too.
    A header whose `createdAt` is out of range reads as 0 (`envelope.readable_header`).
    """

    header: dict[str, Any]
    events: list[dict[str, Any]]
    skipped_lines: tuple[int, ...] = ()
    replace_lines: dict[int, int] = field(default_factory=dict)


def iter_line_spans(data: bytes) -> Iterator[tuple[int, int, int]]:
    """(1-based line number, start, end) of every line of `data`, one at a time (nothing is copied).

    The unterminated final line is included only when it parses (it may be a write in progress).
    """
    start, number, size = 0, 0, len(data)
    while start < size:
        end = data.find(b"\n", start)
        number += 1
        if end < 0:
            tail = data[start:]
            if tail.strip() and parse_line(tail) is not None:
                yield number, start, size
            return
        yield number, start, end
        start = end + 1


@dataclass(slots=True)
class LogLines:
    """The readable lines of a whole log, read one at a time (`lines()`), and what was left out.

    `header` is set once `lines()` has started; `skipped` and `replace_lines` fill as it goes
    (see `LogReport`). Raises `StoreError(STORE_INVALID_LOG)` when there is no session header.
    """

    data: bytes
    header: dict[str, Any] | None = None
    skipped: list[int] = field(default_factory=list)
    replace_lines: dict[int, int] = field(default_factory=dict)

    def lines(self) -> Iterator[tuple[int, int, list[dict[str, Any]]]]:
        """(start, end, events) of each readable line after the header, in order."""
        previous: int | None = None
        data = self.data
        for number, start, end in iter_line_spans(data):
            if number % YIELD_EVERY_LINES == 0:
                time.sleep(0)  # lets a waiting thread (the UI loop) have the GIL; see YIELD_EVERY_LINES
            line = data[start:end]
            if not line.strip():
                continue
            record = parse_line(line)
            if self.header is None:
                if record is None or not is_header(record):
                    raise StoreError(STORE_INVALID_LOG, "the log does not start with a session header")
                self.header = readable_header(record)
                continue
            readable = events_of_record(record) if record is not None else None
            if not readable or (previous is not None and readable[0]["seq"] <= previous):
                self.skipped.append(number)
                continue
            previous = readable[-1]["seq"]
            if isinstance(readable[0].get("surfaceOp"), dict):
                self.replace_lines[previous] = number
            yield start, end, readable
        if self.header is None:
            raise StoreError(STORE_INVALID_LOG, "the log is empty")


def parse_log_report(data: bytes) -> LogReport:
    """Header, readable events (packed rows expanded) and skipped line numbers of a whole log.

    An unterminated final line is ignored unless it parses. Raises `StoreError(STORE_INVALID_LOG)`
    only when there is no session header: the first non-blank line must be one.
    """
    reader = LogLines(data)
    events: list[dict[str, Any]] = []
    for _start, _end, readable in reader.lines():
        events.extend(readable)
    assert reader.header is not None  # `lines()` raised otherwise
    return LogReport(reader.header, events, tuple(reader.skipped), reader.replace_lines)


def events_of_record(record: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The events one log record stands for (a packed row's chunks), or None for a line readers skip."""
    if is_packed_row(record):
        try:
            return expand_packed_row(record)
        except StoreError:
            return None
    return [record] if is_readable_event(record) else None


def parse_log(data: bytes) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Header and readable events of a whole log (see `parse_log_report`)."""
    report = parse_log_report(data)
    return report.header, report.events
