"""Reading and durably appending `session.jsonl` logs (and reading DSH `session.jsonl.zstd`).

Lines are JSON objects separated by `\\n`. A final line without its newline is a torn write
when it does not parse: readers ignore it and `repair_torn_tail` moves its bytes to a
`.torn` side file, so nothing that was ever written is dropped.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sessionref.store.errors import STORE_INVALID_LOG, STORE_UNREADABLE, StoreError

PACKED_CHUNK_TYPES = frozenset({"text-chunks", "reasoning-chunks", "tool-call-chunks"})
TORN_SUFFIX = ".torn"


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


def read_log_bytes(path: Path) -> bytes:
    """The decoded bytes of a log file (zstd frames are decompressed one after another)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise
    except OSError as error:
        raise StoreError(STORE_UNREADABLE, f"cannot read {path.name}: {error.strerror or error}") from error
    if not is_compressed(path):
        return raw
    import zstandard

    try:
        reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw), read_across_frames=True)
        return reader.read()
    except zstandard.ZstdError as error:
        raise StoreError(STORE_UNREADABLE, f"cannot decompress {path.name}: {error}") from error


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


def parse_line(line: bytes) -> dict[str, Any] | None:
    """The JSON object on `line`, or None when it is not one (blank lines are None too)."""
    if not line.strip():
        return None
    try:
        value = json.loads(line)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _packed_texts(row: dict[str, Any]) -> list[Any]:
    data = row.get("data") or {}
    key = "args" if row.get("type") == "tool-call-chunks" else "texts"
    texts = data.get(key)
    return texts if isinstance(texts, list) else []


def packed_row_span(row: dict[str, Any]) -> tuple[int, int] | None:
    """(first seq, last seq) covered by a packed chunk row, or None when the row is malformed."""
    seq0 = row.get("seq0")
    texts = _packed_texts(row)
    if not isinstance(seq0, int) or isinstance(seq0, bool) or not texts:
        return None
    return seq0, seq0 + len(texts) - 1


def expand_packed_row(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The `assistant/chunk` events one packed `*-chunks` row stands for (one per text, in seq order).

    Raises `StoreError(STORE_INVALID_LOG)` when the row is malformed.
    """
    data = row.get("data")
    span = packed_row_span(row)
    time0 = row.get("time0")
    if span is None or not isinstance(data, dict) or not isinstance(time0, int):
        raise StoreError(STORE_INVALID_LOG, "a packed chunk row is malformed")
    texts = _packed_texts(row)
    gaps = data.get("dt") or []
    if not isinstance(gaps, list) or not all(isinstance(gap, int) for gap in gaps):
        raise StoreError(STORE_INVALID_LOG, "a packed chunk row has invalid time deltas")
    kind = row["type"]
    events: list[dict[str, Any]] = []
    time = time0
    for offset, text in enumerate(texts):
        if offset > 0 and offset - 1 < len(gaps):
            time += gaps[offset - 1]
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


def iter_records(
    lines: Sequence[bytes], *, first_line_number: int = 1
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) per non-blank line; a line that is not a JSON object raises STORE_INVALID_LOG."""
    for number, line in enumerate(lines, start=first_line_number):
        if not line.strip():
            continue
        record = parse_line(line)
        if record is None:
            raise StoreError(STORE_INVALID_LOG, f"line {number} of the log is not a JSON object")
        yield number, record


def parse_log(data: bytes) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Header and raw events of a whole log (packed chunk rows expanded, torn tail ignored).

    Raises `StoreError(STORE_INVALID_LOG)` for a missing header or a bad line before the tail.
    """
    split = split_lines(data)
    lines = list(split.lines)
    tail_record = parse_line(split.tail) if split.tail.strip() else None
    if tail_record is not None:
        lines.append(split.tail)
    header: dict[str, Any] | None = None
    events: list[dict[str, Any]] = []
    for number, record in iter_records(lines):
        if header is None:
            if record.get("type") != "session":
                raise StoreError(STORE_INVALID_LOG, "the log does not start with a session header")
            header = record
        elif record.get("type") in PACKED_CHUNK_TYPES and "seq0" in record:
            events.extend(expand_packed_row(record))
        else:
            if not isinstance(record.get("seq"), int):
                raise StoreError(STORE_INVALID_LOG, f"line {number} of the log has no integer seq")
            events.append(record)
    if header is None:
        raise StoreError(STORE_INVALID_LOG, "the log is empty")
    return header, events


def _fsync_directory(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def create_log(path: Path, header: dict[str, Any]) -> None:
    """Create a new log holding only `header`; fails with FileExistsError if the file exists."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    with os.fdopen(fd, "wb") as file:
        file.write(encode_line(header))
        file.flush()
        os.fsync(file.fileno())
    _fsync_directory(path.parent)


def append_lines(path: Path, lines: Sequence[bytes]) -> int:
    """Append whole lines with one write, flush and fsync; returns the file size afterwards."""
    with open(path, "ab") as file:
        file.write(b"".join(lines))
        file.flush()
        os.fsync(file.fileno())
        return file.tell()


def repair_torn_tail(path: Path) -> bytes:
    """Make the log end with a newline without losing bytes; returns the bytes moved aside (may be empty).

    A final unterminated line that parses as a JSON object just gets its newline. One that does
    not is appended to `<log>.torn` (fsynced) and only then truncated from the log.
    """
    with open(path, "r+b") as file:
        size = file.seek(0, os.SEEK_END)
        if size == 0:
            return b""
        file.seek(size - 1)
        if file.read(1) == b"\n":
            return b""
        window = min(size, 1 << 16)
        file.seek(size - window)
        chunk = file.read(window)
        while b"\n" not in chunk and window < size:
            window = min(size, window * 4)
            file.seek(size - window)
            chunk = file.read(window)
        newline = chunk.rfind(b"\n")
        tail_start = size - window + newline + 1 if newline >= 0 else 0
        file.seek(tail_start)
        tail = file.read()
        if not tail:
            return b""
        if parse_line(tail) is not None:
            file.seek(0, os.SEEK_END)
            file.write(b"\n")
            file.flush()
            os.fsync(file.fileno())
            return b""
        torn_path = path.with_name(path.name + TORN_SUFFIX)
        with open(torn_path, "ab") as torn:
            torn.write(tail + b"\n")
            torn.flush()
            os.fsync(torn.fileno())
        file.truncate(tail_start)
        file.flush()
        os.fsync(file.fileno())
        return tail
