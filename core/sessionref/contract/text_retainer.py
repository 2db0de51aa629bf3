"""Bounded text retention: `truncate_with_notice` (docs/contract.md §4) and `TextRetainer`.

`TextRetainer` is upstream's streaming retainer, reproduced and pinned by the conformance
vectors (`tests/conformance/`); the product itself only calls `truncate_with_notice`.

`TextRetainer` treats everything pushed as one UTF-8 byte stream and keeps the
first `head_bytes` and the last `tail_bytes`. Each cut is repaired to a code
point boundary and decoded on its own with a replacing decoder that, like the
WHATWG `TextDecoder`, drops one leading BOM per decoded piece. Lone surrogates
in pushed strings are encoded as U+FFFD, as `TextEncoder` does.

`truncate_with_notice` shortens one text to a byte budget, appending
`"\\n[… omitted N UTF-8 bytes …]"`, with upstream's exact binary search.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from sessionref.contract.js_json import encode_utf8, utf8_len

__all__ = [
    "PushResult",
    "RetainedText",
    "TextRetainer",
    "TruncatedText",
    "head_tail_retain",
    "truncate_with_notice",
]

_BOM = b"\xef\xbb\xbf"


def _is_continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


def _sequence_length(lead: int) -> int:
    """How many bytes a UTF-8 lead byte announces (1 for anything that is not a multi-byte lead)."""
    if lead & 0xE0 == 0xC0:
        return 2
    if lead & 0xF0 == 0xE0:
        return 3
    if lead & 0xF8 == 0xF0:
        return 4
    return 1


def _complete_prefix_length(data: bytes | bytearray, length: int) -> int:
    """`length` shortened so `data[:length]` does not end inside an incomplete UTF-8 sequence."""
    index = length - 1
    steps = 0
    while index >= 0 and steps < 3 and _is_continuation(data[index]):
        index -= 1
        steps += 1
    if index < 0 or _is_continuation(data[index]):
        return length
    if length - index < _sequence_length(data[index]):
        return index
    return length


def _leading_continuations(data: bytes | bytearray, start: int, end: int) -> int:
    """How many continuation bytes open `data[start:end]`."""
    count = 0
    while start + count < end and _is_continuation(data[start + count]):
        count += 1
    return count


def _decode_piece(data: bytes | bytearray) -> tuple[str, bool]:
    """Decode like `new TextDecoder().decode(data)`; also say whether a leading BOM was dropped."""
    if data[:3] == _BOM:
        return bytes(data[3:]).decode("utf-8", "replace"), True
    return bytes(data).decode("utf-8", "replace"), False


def _non_negative_integer(value: Any, field: str) -> int:
    valid = (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and float(value).is_integer()
        and value >= 0
    )
    if not valid:
        raise ValueError(f"{field} must be a non-negative integer")
    return int(value)


@dataclass(frozen=True, slots=True)
class PushResult:
    """What one push did: `kept` is False if it grew the omitted count, `truncated` if anything is omitted."""

    kept: bool
    truncated: bool


@dataclass(frozen=True, slots=True)
class RetainedText:
    """The retained text; `omitted_bytes` is None when nothing was omitted, else the exact byte count."""

    text: str
    truncated: bool
    omitted_bytes: int | None

    def to_json(self) -> dict[str, Any]:
        """Upstream's shape: `{text, truncated, omittedBytes: {kind:"none"} | {kind:"exact", count}}`."""
        omitted: dict[str, Any] = (
            {"kind": "none"} if self.omitted_bytes is None else {"kind": "exact", "count": self.omitted_bytes}
        )
        return {"text": self.text, "truncated": self.truncated, "omittedBytes": omitted}


class TextRetainer:
    """Keep the first `head_bytes` and last `tail_bytes` of a pushed byte stream.

    Build one with `head(max)`, `tail(max)` or `head_tail(head, tail)`. Budgets
    must be non-negative integers, else `ValueError("<field> must be a
    non-negative integer")` (field names as upstream: maxBytes, headBytes, tailBytes).
    """

    def __init__(self, head_bytes: int, tail_bytes: int) -> None:
        self._head_budget = head_bytes
        self._tail_budget = tail_bytes
        self._head = bytearray()
        self._tail = bytearray()
        self._total = 0

    @classmethod
    def head(cls, max_bytes: Any) -> TextRetainer:
        """Keep only the first `max_bytes` bytes."""
        return cls(_non_negative_integer(max_bytes, "maxBytes"), 0)

    @classmethod
    def tail(cls, max_bytes: Any) -> TextRetainer:
        """Keep only the last `max_bytes` bytes."""
        return cls(0, _non_negative_integer(max_bytes, "maxBytes"))

    @classmethod
    def head_tail(cls, head_bytes: Any, tail_bytes: Any) -> TextRetainer:
        """Keep the first `head_bytes` and the last `tail_bytes` bytes."""
        head = _non_negative_integer(head_bytes, "headBytes")
        return cls(head, _non_negative_integer(tail_bytes, "tailBytes"))

    @classmethod
    def from_strategy(cls, strategy: dict[str, Any]) -> TextRetainer:
        """Build from upstream's strategy object (`{kind: "head"|"tail"|"headTail", …budgets}`)."""
        kind: Literal["head", "tail", "headTail"] | Any = strategy.get("kind")
        if kind == "head":
            return cls.head(strategy.get("maxBytes"))
        if kind == "tail":
            return cls.tail(strategy.get("maxBytes"))
        if kind == "headTail":
            return cls.head_tail(strategy.get("headBytes"), strategy.get("tailBytes"))
        raise ValueError(f"unknown retention strategy kind {kind!r}")

    def _budget_omitted(self) -> int:
        prefix = min(self._total, self._head_budget)
        return self._total - prefix - min(self._total - prefix, self._tail_budget)

    def push(self, chunk: str | bytes) -> PushResult:
        """Append a string (UTF-8, lone surrogates as U+FFFD) or raw bytes to the stream."""
        data = encode_utf8(chunk) if isinstance(chunk, str) else bytes(chunk)
        omitted_before = self._budget_omitted()
        self._total += len(data)
        room = self._head_budget - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if data and self._tail_budget:
            self._tail += data
            if len(self._tail) > self._tail_budget:
                del self._tail[: len(self._tail) - self._tail_budget]
        omitted_after = self._budget_omitted()
        return PushResult(kept=omitted_after == omitted_before, truncated=omitted_after > 0)

    def finish(self) -> RetainedText:
        """The retained text: the whole stream if it fit, else repaired head + tail decoded separately."""
        if self._budget_omitted() == 0:
            text, _ = _decode_piece(self._head + self._tail)
            return RetainedText(text, False, None)
        head_length = _complete_prefix_length(self._head, len(self._head))
        skip = _leading_continuations(self._tail, 0, len(self._tail))
        head_text, _ = _decode_piece(self._head[:head_length])
        tail_text, _ = _decode_piece(self._tail[skip:])
        omitted = self._total - head_length - (len(self._tail) - skip)
        return RetainedText(head_text + tail_text, omitted > 0, omitted)


@dataclass(frozen=True, slots=True)
class _Cut:
    head_end: int
    tail_start: int
    omitted: int


def _head_tail_cut(data: bytes, head_bytes: int, tail_bytes: int) -> _Cut | None:
    """Where a head/tail retention of the whole `data` cuts; None when everything fits."""
    total = len(data)
    prefix = min(total, head_bytes)
    suffix = min(total - prefix, tail_bytes)
    if total - prefix - suffix == 0:
        return None
    head_end = _complete_prefix_length(data, prefix)
    tail_start = total - suffix
    tail_start += _leading_continuations(data, tail_start, total)
    return _Cut(head_end, tail_start, total - head_end - (total - tail_start))


def head_tail_retain(text: str, head_bytes: int, tail_bytes: int) -> RetainedText:
    """TextRetainer headTail over one whole string: one push, then finish."""
    retainer = TextRetainer.head_tail(head_bytes, tail_bytes)
    retainer.push(text)
    return retainer.finish()


class TruncatedText(NamedTuple):
    """A text cut to a byte budget and how many of its UTF-8 bytes were left out (unpacks as a pair)."""

    text: str
    omitted_bytes: int


def _bom_bytes(data: bytes, start: int, end: int) -> int:
    """3 if the piece `data[start:end]` opens with a BOM (which its decoder drops), else 0."""
    return 3 if end - start >= 3 and data[start : start + 3] == _BOM else 0


def _notice(omitted: int) -> str:
    return f"\n[… omitted {omitted} UTF-8 bytes …]"


def truncate_with_notice(text: str, max_bytes: int) -> TruncatedText:
    """`text` unchanged if it fits `max_bytes`, else the longest head+tail+notice upstream's search finds.

    The search probes `r` in `[0, max_bytes]` exactly as upstream does (keeping
    `ceil(r/2)` head and `floor(r/2)` tail bytes); the text is encoded once and
    each probe only measures byte offsets. If nothing fits, the text is `""`
    and every byte counts as omitted.
    """
    total_bytes = utf8_len(text)
    if total_bytes <= max_bytes:
        return TruncatedText(text, 0)
    data = encode_utf8(text)
    best_cut: _Cut | None = None
    low, high = 0, max_bytes
    while low <= high:
        probe = (low + high) // 2
        cut = _head_tail_cut(data, probe - probe // 2, probe // 2)
        if cut is None:  # cannot happen for a text longer than the budget; kept for totality
            high = probe - 1
            continue
        kept = cut.head_end + (len(data) - cut.tail_start)
        kept -= _bom_bytes(data, 0, cut.head_end) + _bom_bytes(data, cut.tail_start, len(data))
        if kept + utf8_len(_notice(cut.omitted)) <= max_bytes:
            best_cut = cut
            low = probe + 1
        else:
            high = probe - 1
    if best_cut is None:
        return TruncatedText("", total_bytes)
    head_text, _ = _decode_piece(data[: best_cut.head_end])
    tail_text, _ = _decode_piece(data[best_cut.tail_start :])
    return TruncatedText(head_text + tail_text + _notice(best_cut.omitted), best_cut.omitted)
