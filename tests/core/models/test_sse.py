"""The SSE readers: bounded line splitting over any split of the bytes, event decoding, and a fuzz run."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sessionref.models import MODEL_STREAM_TOO_LARGE, ModelError
from sessionref.models.openai_stream import parse_chunk
from sessionref.models.sse import SseDecoder, SseLineSplitter

BOM = b"\xef\xbb\xbf"


def split_all(pieces: list[bytes], limit: int) -> tuple[list[str], ModelError | None]:
    """Lines the splitter yields for ``pieces`` fed in order, and the error it ended with (if any)."""
    splitter = SseLineSplitter(limit)
    lines: list[str] = []
    try:
        for piece in pieces:
            lines.extend(splitter.feed(piece))
        lines.extend(splitter.flush())
    except ModelError as error:
        return lines, error
    return lines, None


def reference_lines(data: bytes) -> list[bytes]:
    """The lines of a whole body by the SSE rules: one leading BOM dropped, CRLF, LF or CR ends a line."""
    parts = re.split(rb"\r\n|\r|\n", data.removeprefix(BOM))
    return parts[:-1] + ([parts[-1]] if parts[-1] else [])


def pieces_of(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({cut % (len(data) + 1) for cut in cuts})
    bounds = [0, *points, len(data)]
    return [data[start:end] for start, end in itertools.pairwise(bounds)]


def test_line_ends_of_every_kind_and_a_crlf_split_across_pieces() -> None:
    lines, error = split_all([b"a\r\nb\nc\r", b"\nd\re", b"\r", b"\n", b"f"], limit=100)
    assert error is None
    assert lines == ["a", "b", "c", "d", "e", "f"]


def test_a_leading_bom_is_dropped_even_when_split() -> None:
    lines, error = split_all([b"\xef", b"\xbb", b"\xbfdata: x\n"], limit=100)
    assert (lines, error) == (["data: x"], None)
    assert split_all([b"data: \xef\xbb\xbf\n"], limit=100)[0] == ["data: \ufeff"]


def test_invalid_utf8_becomes_replacement_characters() -> None:
    assert split_all([b"data: \xff\xfe\n"], limit=100)[0] == ["data: \ufffd\ufffd"]


def test_an_open_line_past_the_limit_raises_without_waiting_for_its_end() -> None:
    splitter = SseLineSplitter(8)
    assert list(splitter.feed(b"ok\n12345")) == ["ok"]
    with pytest.raises(ModelError) as caught:
        list(splitter.feed(b"6789"))
    assert caught.value.code == MODEL_STREAM_TOO_LARGE


def test_lines_before_an_over_long_one_in_the_same_piece_come_first() -> None:
    lines, error = split_all([b"one\ntwo\n" + b"x" * 50 + b"\nthree\n"], limit=10)
    assert lines == ["one", "two"]
    assert error is not None and error.code == MODEL_STREAM_TOO_LARGE


def test_the_limit_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        SseLineSplitter(0)


def test_decoder_joins_data_lines_and_ignores_comments_and_other_fields() -> None:
    decoder = SseDecoder()
    out: list[str] = []
    for line in [": hi", "event: x", "id: 1", "retry: 5", "data: a", "data:b", "", "data: c"]:
        out.extend(decoder.feed_line(line))
    out.extend(decoder.flush())
    assert out == ["a\nb", "c"]
    assert decoder.stray_lines == []
    list(decoder.feed_line("<html>"))
    assert decoder.stray_lines == ["<html>"]


SSE_ALPHABET = st.sampled_from(
    [
        b"\r",
        b"\n",
        b"\r\n",
        b"data:",
        b"data: ",
        b":",
        b" ",
        b"x",
        b"\xef\xbb\xbf",
        b"\xff",
        b"\xe2\x80",
        b"[DONE]",
        b'{"choices":[{"delta":{"content":"hi"}}]}',
        b'{"error":{"message":"e"}}',
        b"{",
        b"[" * 50,
        b"event: y",
        b"\x00",
    ]
)


@settings(max_examples=300, deadline=None)
@given(
    body=st.lists(SSE_ALPHABET, max_size=40).map(b"".join) | st.binary(max_size=300),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=8),
    limit=st.integers(min_value=1, max_value=64),
)
@example(body=b"\xef\xbb", cuts=[1], limit=4)
@example(body=b"a\r", cuts=[2], limit=4)
@example(body=b"\r\n\r\n", cuts=[1, 2, 3], limit=1)
def test_any_split_gives_the_lines_of_the_whole_body_up_to_the_first_over_long_one(
    body: bytes, cuts: list[int], limit: int
) -> None:
    lines, error = split_all(pieces_of(body, cuts), limit)
    expected = reference_lines(body)
    too_long = [index for index, line in enumerate(expected) if len(line) > limit]
    if too_long:
        assert error is not None and error.code == MODEL_STREAM_TOO_LARGE
        expected = expected[: too_long[0]]
    else:
        assert error is None
    assert lines == [line.decode("utf-8", errors="replace") for line in expected]


@settings(max_examples=300, deadline=None)
@given(
    body=st.lists(SSE_ALPHABET, max_size=60).map(b"".join) | st.binary(max_size=400),
    cuts=st.lists(st.integers(min_value=0, max_value=500), max_size=6),
)
@example(body=b"data: " + b"[" * 5000 + b"\n\n", cuts=[])
@example(body=b'data: {"choices":[{"delta":{"content":"\\ud800"}}]}\n\n', cuts=[])
def test_fuzz_the_whole_sse_reader_raises_only_model_errors(body: bytes, cuts: list[int]) -> None:
    """Bytes → lines → events → deltas, as the model reads a stream: nothing but ModelError escapes."""
    splitter = SseLineSplitter(256)
    decoder = SseDecoder()
    try:
        for piece in [*pieces_of(body, cuts), None]:
            lines = splitter.flush() if piece is None else splitter.feed(piece)
            for line in [*lines, *([""] if piece is None else [])]:
                for data in decoder.feed_line(line):
                    if data.strip() != "[DONE]":
                        delta, _finished = parse_chunk(data)
                        assert isinstance(delta, str)
    except ModelError as error:
        assert error.code in {"MODEL_STREAM_TOO_LARGE", "MODEL_BAD_RESPONSE", "MODEL_HTTP_ERROR"}
        assert len(error.message) < 600
