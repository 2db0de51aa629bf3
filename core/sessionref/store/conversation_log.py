"""Reading a log's conversation for the conversation index, faster than a full parse.

`read_log_conversation` reads one log once: only surface events are decoded; every other line
(chunk deltas, packed chunk rows, requests, titles) is skipped after reading its type and seq,
which is all the fold needs of it. The rows are `service.conversation_rows`' projection.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from sessionref.contract.log_values import MAX_SEQ
from sessionref.service.conversation_rows import SessionConversation, conversation_rows
from sessionref.store.envelope import readable_header
from sessionref.store.errors import STORE_INVALID_LOG, StoreError
from sessionref.store.fold import SURFACE_TYPES
from sessionref.store.lean_surface import SurfaceStubs
from sessionref.store.logfile import (
    events_of_record,
    is_header,
    iter_line_spans,
    packed_row_span,
    parse_line,
    read_log_bytes,
)

_SURFACE_PREFIXES = tuple(f'{{"type":"{kind}",'.encode() for kind in sorted(SURFACE_TYPES))
# `{"type":"<type>","seq":N,` or a packed row's `{"type":"<type>","seq0":N,`: the envelope's key order.
_ENVELOPE = re.compile(rb'\{"type":"([A-Za-z0-9/_.:-]*)","seq(0?)":(\d+)[,}]')


_SEQ_DIGITS = len(str(MAX_SEQ))


def _skim(line: bytes) -> dict[str, Any] | None:
    """A stand-in for a log-only line carrying just its type and (first) seq, or None to parse it."""
    if line.startswith(_SURFACE_PREFIXES) or b'"surfaceOp"' in line:
        return None
    match = _ENVELOPE.match(line)
    if match is None or len(match.group(3)) > _SEQ_DIGITS or int(match.group(3)) > MAX_SEQ:
        return None
    kind = match.group(1).decode("ascii")
    if kind in SURFACE_TYPES:
        return None
    return {"type": "assistant/chunk" if match.group(2) else kind, "seq": int(match.group(3))}


def _packed_row_end(line: bytes) -> int | None:
    """The last seq of the packed chunk row on `line`, or None when it is not a well-formed one."""
    record = parse_line(line)
    span = packed_row_span(record) if record is not None and "seq0" in record else None
    return span[1] if span is not None else None


def read_log_conversation(path: Path) -> SessionConversation:
    """The header and projected rows of the log at `path` (plain or zstd), read once.

    Surface events are decoded in full and folded by the store's `fold_surface` (as stubs, then
    decoded again for their rows: `lean_surface`), so the rows equal the projection of
    `read_surface`. Log-only lines are only skimmed: a malformed chunk
    row the full parser would reject is not noticed here. A line readers skip (its envelope, see
    `envelope.is_readable_event`) or the fold cannot apply is left out as `read_surface` leaves it
    out. Raises `StoreError(STORE_INVALID_LOG)` for a log without a header, `FileNotFoundError`
    when the file vanished.
    """
    data = read_log_bytes(path)
    header: dict[str, Any] | None = None
    stubs = SurfaceStubs(data)
    previous: int | None = None
    packed_tail: tuple[int, int] | None = None  # the last line, when it is a skimmed packed row
    skipped_any = False
    for _number, start, end in iter_line_spans(data):
        line = data[start:end]
        if header is not None:
            skimmed = _skim(line)
            if skimmed is not None:
                if previous is None or skimmed["seq"] > previous:
                    stubs.add(start, end, skimmed)
                    previous = skimmed["seq"]
                    packed_tail = (start, end) if skimmed["type"] == "assistant/chunk" else None
                else:
                    skipped_any = True
                continue
        if not line.strip():
            continue
        record = parse_line(line)
        if header is None:
            if record is None or not is_header(record):
                raise StoreError(STORE_INVALID_LOG, "the log does not start with a session header")
            header = readable_header(record)
            continue
        readable = events_of_record(record) if record is not None else None
        if not readable or (previous is not None and readable[0]["seq"] <= previous):
            skipped_any = True  # skipped, as `parse_log_report` skips it
            continue
        stubs.add(start, end, readable[-1])
        previous, packed_tail = readable[-1]["seq"], None
    if header is None:
        raise StoreError(STORE_INVALID_LOG, "the log is empty")
    if packed_tail is not None:  # a log ending in a packed row was last written at the row's final seq
        last = _packed_row_end(data[packed_tail[0] : packed_tail[1]])
        if last is not None:
            stubs.add(*packed_tail, {"type": "assistant/chunk", "seq": last})
    surface = stubs.fold(header, lenient=skipped_any, unfolded=[])
    return SessionConversation(header, conversation_rows(surface), surface["capturedThroughSeq"])
