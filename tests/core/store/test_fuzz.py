"""Bounded fuzz of the store's file parsers: only `StoreError` may come out, never another exception.

Covered: log lines and whole logs (`parse_line`, `parse_log_report`), headers and discovery scans
(`scan_log`), packed chunk rows (`expand_packed_row`), zstd frames (`read_log_bytes`), session
folder names (`decode_session_segment`), folding (`fold_surface`), appended events
(`build_events`), index rows (`DiscoveryIndex.load`), and a whole store opened over a fuzzed log.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
import tempfile
from contextlib import closing
from pathlib import Path
from typing import Any

import zstandard
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sessionref.contract.log_values import is_epoch_ms, is_seq
from sessionref.contract.projection import project_session_conversation
from sessionref.service.conversation_rows import conversation_rows
from sessionref.store import StoreError, open_store
from sessionref.store.access import fold_report, read_lean_surface
from sessionref.store.conversation_log import read_log_conversation
from sessionref.store.events import build_events
from sessionref.store.fold import fold_surface
from sessionref.store.index import DiscoveryIndex
from sessionref.store.layout import decode_session_segment
from sessionref.store.logfile import expand_packed_row, parse_line, parse_log_report, read_log_bytes
from sessionref.store.paths import checked_log_path
from sessionref.store.scan import scan_log

FUZZ = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.floats(allow_nan=False) | st.text()
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
types = (
    st.sampled_from(
        [
            "user/message",
            "assistant/message",
            "tool/result",
            "system/message",
            "turn/start",
            "session/title",
            "text-chunks",
            "tool-call-chunks",
            "reasoning-chunks",
            "session",
        ]
    )
    | json_values
)
HUGE = st.sampled_from([2**53, 2**63 - 1, 2**63, 2**64, 2**70, -(2**63) - 1, 253_402_300_800_000, 10**30])
"""Integers beyond what SQLite (int64), JavaScript (2^53) or the clock (year 9999) can hold."""
surface_ops = (
    st.sampled_from(["append"])
    | st.fixed_dictionaries(
        {"op": st.just("replace"), "start": st.integers(-2, 8) | HUGE, "end": st.integers(-2, 8) | HUGE}
    )
    | st.sampled_from(["delete", "replace", "", None])
    | json_values
)
events = st.fixed_dictionaries(
    {"type": types, "seq": st.integers(-1, 12) | HUGE | json_values},
    optional={
        "time": st.integers(-5, 2**54) | HUGE | json_values,
        "data": json_values | st.fixed_dictionaries({"message": json_values, "title": json_values}),
        "surfaceOp": surface_ops,
        "sourceEventSeqs": st.lists(st.integers(-1, 12) | HUGE) | json_values,
        "seq0": st.integers(-1, 12) | HUGE | json_values,
        "time0": st.integers(0, 9) | HUGE | json_values,
    },
)
headers = st.fixed_dictionaries(
    {"type": st.just("session") | types, "id": st.text(min_size=1) | json_values},
    optional={"createdAt": st.integers(-5, 2**60) | HUGE | json_values, "cwd": st.text() | json_values},
)


def encoded(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


shapeless = st.dictionaries(st.sampled_from(["seq", "time", "data", "surfaceOp", "id"]), json_values | HUGE)
"""Objects without a `type` (or with only some envelope keys): lines readers must skip, not crash on."""
lines = st.one_of(
    events.map(encoded),
    headers.map(encoded),
    st.binary(max_size=40),
    json_values.map(encoded),
    shapeless.map(encoded),
)
first_lines = headers.map(encoded) | st.binary(max_size=30)
logs = st.tuples(first_lines, st.lists(lines, max_size=8), st.booleans()).map(
    lambda parts: b"\n".join([parts[0], *parts[1]]) + (b"\n" if parts[2] else b"")
)
DEEP = b'{"type":"turn/start","seq":1,"data":' + b"[" * 3000 + b"]" * 3000 + b"}"


@FUZZ
@given(st.binary(max_size=200) | lines)
@example(DEEP)
@example(b'{"seq": 1e400, "x": NaN}')
@example(b'{"seq": ' + b"9" * 5000 + b"}")
def test_parse_line_never_raises(line: bytes) -> None:
    result = parse_line(line)
    assert result is None or isinstance(result, dict)


@FUZZ
@given(logs)
@example(b'{"type":"session","id":"s"}\n' + DEEP + b"\n")
def test_parse_log_report_raises_only_store_errors(data: bytes) -> None:
    try:
        report = parse_log_report(data)
    except StoreError:
        return
    seqs = [event["seq"] for event in report.events]
    assert seqs == sorted(set(seqs))
    with contextlib.suppress(StoreError):
        fold_surface(report.header, report.events, lenient=bool(report.skipped_lines))


GOOD_HEADER = b'{"type":"session","version":0,"id":"s","createdAt":1}'


@FUZZ
@given(st.lists(lines, max_size=10))
def test_with_a_header_every_hostile_line_costs_only_itself_and_the_lean_read_agrees(
    body: list[bytes],
) -> None:
    data = b"\n".join([GOOD_HEADER, *body]) + b"\n"
    report = parse_log_report(data)  # never raises: the header is good
    snapshot = fold_report(report)  # never raises: what the fold cannot apply is skipped
    for event in [*report.events, *snapshot.snapshot["events"]]:
        assert is_seq(event["seq"]) and ("time" not in event or is_epoch_ms(event["time"]))
    project_session_conversation(snapshot.snapshot)
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "p" / "s" / "session.jsonl"
        log.parent.mkdir(parents=True)
        log.write_bytes(data)
        lean = read_lean_surface(folder, "p/s/session.jsonl", "s")
        conversation = read_log_conversation(log)
    assert lean.skipped_lines == snapshot.skipped_lines
    assert list(lean.snapshot["events"]) == list(snapshot.snapshot["events"])
    assert lean.snapshot["capturedThroughSeq"] == snapshot.snapshot["capturedThroughSeq"]
    assert conversation.rows == conversation_rows(snapshot.snapshot)


@FUZZ
@given(json_values | events)
def test_expand_packed_row_raises_only_store_errors(row: Any) -> None:
    if not isinstance(row, dict):
        row = {"type": "text-chunks", "seq0": 0, "time0": 0, "data": row}
    with contextlib.suppress(StoreError):
        expand_packed_row(row)


@FUZZ
@given(st.text(max_size=40))
def test_decode_session_segment_never_raises(segment: str) -> None:
    decoded = decode_session_segment(segment)
    assert decoded is None or isinstance(decoded, str)


@FUZZ
@given(headers | json_values, st.lists(events, max_size=8), st.booleans())
def test_fold_surface_raises_only_store_errors(header: Any, fold_events: list[Any], lenient: bool) -> None:
    try:
        snapshot = fold_surface(header, fold_events, lenient=lenient)
    except StoreError:
        return
    project_session_conversation(snapshot)


@FUZZ
@given(st.lists(json_values | events, max_size=4))
def test_build_events_raises_only_store_errors(candidates: list[Any]) -> None:
    with contextlib.suppress(StoreError):
        build_events(candidates, first_seq=0, time_ms=1)


row_paths = st.sampled_from(
    [
        "--w--/s/session.jsonl",
        "--w--/s/session.jsonl.zstd",
        "../x/session.jsonl",
        "/abs/s/session.jsonl",
        "--w--/.h/session.jsonl",
        "a/b/c/session.jsonl",
        "--w--/s\x00/session.jsonl",
    ]
) | st.text(max_size=30)
row_values = st.none() | st.integers(-(2**62), 2**62) | st.text(max_size=20) | st.floats(allow_nan=False)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(row_paths, st.lists(row_values, min_size=13, max_size=13))
def test_index_rows_are_validated_not_trusted(path: str, values: list[Any]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        index = DiscoveryIndex(Path(folder) / "index.sqlite")
        try:
            with sqlite3.connect(index.path) as connection:
                connection.execute(f"INSERT INTO logs VALUES ({', '.join('?' * 14)})", (path, *values))
        except (sqlite3.Error, OverflowError):
            index.close()
            return  # the table's types refused the row
        states = index.load()
        index.close()
    for relative, state in states.items():
        assert relative == state.path and checked_log_path(relative) == relative
        assert isinstance(state.created_at, int) and isinstance(state.updated_at, int)


@FUZZ
@given(logs, st.integers(0, 64), st.binary(max_size=16))
def test_zstd_frames_read_or_raise_store_errors(data: bytes, cut: int, noise: bytes) -> None:
    frame = zstandard.ZstdCompressor().compress(data)
    damaged = frame[: max(0, len(frame) - cut)] + noise
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "session.jsonl.zstd"
        path.write_bytes(damaged)
        with contextlib.suppress(StoreError):
            read_log_bytes(path)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(logs, st.booleans())
def test_a_store_over_a_fuzzed_log_raises_only_store_errors(data: bytes, packed: bool) -> None:
    """And it never writes the log nor adds a file beside it."""
    root = Path(tempfile.mkdtemp(prefix="sessionref-fuzz-"))
    try:
        log = root / "--w--" / "s" / ("session.jsonl.zstd" if packed else "session.jsonl")
        log.parent.mkdir(parents=True)
        log.write_bytes(zstandard.ZstdCompressor().compress(data) if packed else data)
        before = log.read_bytes()
        state = scan_log(root, str(log.relative_to(root)), None)
        assert state is None or state.problem is not None or state.session_id
        with closing(open_store(root)) as store:
            import asyncio

            for record in asyncio.run(store.list_sessions()):
                store.title(record.id)
                store.header(record.id)
                try:
                    report = asyncio.run(store.read_surface_report(record.id))
                except StoreError:
                    continue
                project_session_conversation(report.snapshot)
        assert log.read_bytes() == before
        assert sorted(path.name for path in log.parent.iterdir()) == [log.name]
    finally:
        shutil.rmtree(root)
