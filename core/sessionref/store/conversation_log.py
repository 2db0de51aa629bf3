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
from sessionref.store.fold import SURFACE_TYPES, fold_surface
from sessionref.store.logfile import (
    events_of_record,
    is_header,
    packed_row_span,
    parse_line,
    read_log_bytes,
    split_lines,
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


def _extend_last_packed_row(events: list[dict[str, Any]], lines: list[bytes]) -> None:
    """A log ending in a packed chunk row was last written at the row's final seq, not its first."""
    for line in reversed(lines):
        if line.strip():
            record = parse_line(line)
            span = packed_row_span(record) if record is not None and "seq0" in record else None
            if span is not None and span[0] == events[-1]["seq"]:
                events[-1] = {"type": "assistant/chunk", "seq": span[1]}
            return


def read_log_conversation(path: Path) -> SessionConversation:
    """The header and projected rows of the log at `path` (plain or zstd), read once.

    Surface events are decoded in full and folded by the store's `fold_surface`, so the rows
    equal the projection of `read_surface`. Log-only lines are only skimmed: a malformed chunk
    row the full parser would reject is not noticed here. A line readers skip (its envelope, see
    `envelope.is_readable_event`) or the fold cannot apply is left out as `read_surface` leaves it
    out. Raises `StoreError(STORE_INVALID_LOG)` for a log without a header, `FileNotFoundError`
    when the file vanished.
    """
    data = read_log_bytes(path)
    split = split_lines(data)
    lines = split.lines
    if split.tail.strip() and parse_line(split.tail) is not None:
        lines = [*lines, split.tail]
    header: dict[str, Any] | None = None
    events: list[dict[str, Any]] = []
    skipped_any = False
    for line in lines:
        if header is not None:
            skimmed = _skim(line)
            if skimmed is not None:
                if not events or skimmed["seq"] > events[-1]["seq"]:
                    events.append(skimmed)
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
        if not readable or (events and readable[0]["seq"] <= events[-1]["seq"]):
            skipped_any = True  # skipped, as `parse_log_report` skips it
            continue
        if len(readable) > 1 or readable[0] is not record:
            events.append({"type": "assistant/chunk", "seq": readable[-1]["seq"]})
        else:
            events.append(readable[0])
    if header is None:
        raise StoreError(STORE_INVALID_LOG, "the log is empty")
    if events and events[-1]["type"] == "assistant/chunk":
        _extend_last_packed_row(events, lines)
    surface = fold_surface(header, events, lenient=skipped_any, skipped=[])
    return SessionConversation(header, conversation_rows(surface), surface["capturedThroughSeq"])
