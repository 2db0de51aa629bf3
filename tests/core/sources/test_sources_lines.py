"""Safe reading of other programs' files: whole lines only, bounded lines, inside the root, never a FIFO."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sessionref.sources import ForeignSourceError, ForeignSourceErrorCode
from sessionref.sources.lines import LineReader, open_inside, parse_record, parse_timestamp, read_small_text


def lines_of(data: bytes, **options: int) -> tuple[list[tuple[int, bytes | None]], LineReader]:
    reader = LineReader(io.BytesIO(data), **options)
    return list(reader), reader


def test_complete_lines_are_yielded_and_a_half_written_tail_is_pending() -> None:
    lines, reader = lines_of(b'{"a":1}\n\n{"b":2}\n{"c":')
    assert lines == [(1, b'{"a":1}'), (2, b""), (3, b'{"b":2}')]
    assert (reader.offset, reader.line_number, reader.pending_bytes) == (17, 3, 5)


@given(st.lists(st.binary(max_size=12).map(lambda b: b.replace(b"\n", b"")), max_size=8), st.integers(1, 7))
def test_chunk_size_never_changes_the_lines(parts: list[bytes], chunk: int) -> None:
    data = b"\n".join(parts)
    expected = list(enumerate(data.split(b"\n")[:-1], start=1))
    lines, reader = lines_of(data, chunk_bytes=chunk)
    if expected and data.startswith(b"\xef\xbb\xbf"):
        expected[0] = (1, expected[0][1][3:])
    assert lines == expected
    assert reader.offset + reader.pending_bytes == len(data)


def test_resuming_from_an_offset_continues_the_numbering() -> None:
    lines, reader = lines_of(b"one\ntwo\nthree\n", offset=4, line_number=1)
    assert lines == [(2, b"two"), (3, b"three")]
    assert reader.offset == 14


def test_an_oversized_line_is_skipped_without_being_held() -> None:
    data = b"short\n" + b"x" * 50 + b"\nafter\n" + b"y" * 40
    lines, reader = lines_of(data, max_line_bytes=20, chunk_bytes=8)
    assert lines == [(1, b"short"), (2, None), (3, b"after")]
    assert reader.offset == len(data) - 40
    assert reader.pending_bytes == 40


def test_a_bom_is_stripped_from_the_first_line_only() -> None:
    lines, _ = lines_of(b'\xef\xbb\xbf{"a":1}\n\xef\xbb\xbf{"b":2}\n')
    assert lines == [(1, b'{"a":1}'), (2, b'\xef\xbb\xbf{"b":2}')]


@pytest.mark.parametrize(
    "raw",
    [None, b"", b"   ", b"[1,2]", b'"text"', b"{bad", b"\xff\xfe{}", b"[" * 100_000, b"1" * 5000, b"null"],
)
def test_anything_but_one_json_object_is_not_a_record(raw: bytes | None) -> None:
    assert parse_record(raw) is None


def test_a_json_object_line_is_a_record() -> None:
    assert parse_record(b'{"type":"user","n":[1,{"x":"\\ud800"}]}') == {
        "type": "user",
        "n": [1, {"x": "\ud800"}],
    }


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-03-02T09:00:00.000Z", 1772442000000),
        ("2026-03-02T09:00:00.1239Z", 1772442000123),
        ("2026-03-02T10:00:00+01:00", 1772442000000),
        ("2026-03-02T09:00:00", 1772442000000),
        ("1969-12-31T23:59:59Z", None),
        ("not a time", None),
        (1772442000000, None),
        (None, None),
    ],
)
def test_timestamps_are_iso_8601_in_epoch_milliseconds(value: object, expected: int | None) -> None:
    assert parse_timestamp(value) == expected


def test_open_inside_refuses_a_symlink_out_of_the_root(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside.jsonl"
    root.mkdir()
    outside.write_text("{}\n")
    (root / "link.jsonl").symlink_to(outside)
    with pytest.raises(ForeignSourceError) as raised:
        open_inside(root, root / "link.jsonl")
    assert raised.value.code is ForeignSourceErrorCode.OUTSIDE_ROOT


def test_open_inside_follows_a_symlink_that_stays_inside(tmp_path: Path) -> None:
    (tmp_path / "real.jsonl").write_text("{}\n")
    (tmp_path / "link.jsonl").symlink_to(tmp_path / "real.jsonl")
    handle, info = open_inside(tmp_path, tmp_path / "link.jsonl")
    with handle:
        assert handle.read() == b"{}\n"
    assert info.st_size == 3


@pytest.mark.parametrize("kind", ["missing", "directory", "fifo"])
def test_open_inside_refuses_what_is_not_a_regular_file(tmp_path: Path, kind: str) -> None:
    target = tmp_path / "target"
    if kind == "directory":
        target.mkdir()
    elif kind == "fifo":
        os.mkfifo(target)  # opening it for reading must not block
    with pytest.raises(ForeignSourceError) as raised:
        open_inside(tmp_path, target)
    assert raised.value.code is ForeignSourceErrorCode.UNREADABLE


def test_read_small_text_refuses_large_or_outside_files(tmp_path: Path) -> None:
    (tmp_path / "small").write_text("/home/ana\n")
    (tmp_path / "large").write_text("x" * 100)
    assert read_small_text(tmp_path, tmp_path / "small", 64) == "/home/ana\n"
    assert read_small_text(tmp_path, tmp_path / "large", 64) is None
    assert read_small_text(tmp_path / "small", tmp_path / "large", 1000) is None
