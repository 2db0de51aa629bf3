"""Reading a ``text/event-stream`` body: bytes into bounded lines, lines into event data.

Two small incremental parsers, both free of I/O so they can be fed any split of a body:

* :class:`SseLineSplitter` cuts bytes into text lines at ``\\r\\n``, ``\\n`` or ``\\r`` (a ``\\r\\n``
  split across two pieces is still one line end), drops a leading byte-order mark, decodes UTF-8
  with replacement characters, and refuses a line longer than its byte limit with
  ``MODEL_STREAM_TOO_LARGE`` before buffering more of it.
* :class:`SseDecoder` turns those lines into event data strings following the SSE field rules.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from sessionref.models.base import MODEL_STREAM_TOO_LARGE, ModelError

UTF8_BOM: Final = b"\xef\xbb\xbf"


def _mebibytes(count: int) -> str:
    """``count`` bytes for a message: ``1 MiB`` when whole mebibytes, else the exact byte count."""
    mib = 1024 * 1024
    return f"{count // mib} MiB" if count >= mib and count % mib == 0 else f"{count} bytes"


def line_too_long_error(limit: int) -> ModelError:
    """The error for an SSE line longer than ``limit`` bytes."""
    return ModelError(
        MODEL_STREAM_TOO_LARGE,
        f"the model server sent a stream line longer than {_mebibytes(limit)}; the reply was stopped there "
        "and the text received so far is kept",
    )


def reply_too_large_error(limit: int) -> ModelError:
    """The error for a reply body larger than ``limit`` bytes."""
    return ModelError(
        MODEL_STREAM_TOO_LARGE,
        f"the model's reply is larger than {_mebibytes(limit)}; it was stopped there and the text "
        "received so far is kept",
    )


class SseLineSplitter:
    """Splits a byte stream into decoded lines (without their line ends), refusing over-long lines.

    Memory stays bounded by ``max_line_bytes`` plus one fed piece: a line still open when it grows
    past the limit raises at once instead of waiting for its end.
    """

    def __init__(self, max_line_bytes: int) -> None:
        if max_line_bytes < 1:
            raise ValueError("max_line_bytes must be at least 1")
        self.max_line_bytes = max_line_bytes
        self._pending = bytearray()
        self._after_cr = False  # the previous piece ended with "\r": a leading "\n" belongs to it
        self._at_start = True  # nothing seen yet: a byte-order mark may still come

    def feed(self, data: bytes) -> Iterator[str]:
        """Consume ``data``; yield every line it completes, then raise if an open line is too long.

        Lines completed before an over-long one are yielded first, so what came before is kept.
        """
        if not data:
            return
        view = bytes(data)
        if self._after_cr and view.startswith(b"\n"):
            view = view[1:]
        self._after_cr = False
        if self._at_start:
            self._pending.extend(view)
            if len(self._pending) < len(UTF8_BOM) and UTF8_BOM.startswith(bytes(self._pending)):
                return  # could still be the start of a byte-order mark
            self._at_start = False
            view = bytes(self._pending).removeprefix(UTF8_BOM)
            self._pending.clear()
        start = 0
        length = len(view)
        while start < length:
            end = _next_line_end(view, start)
            if end < 0:
                break
            yield self._take_line(view[start:end])
            if view[end] == 0x0D:  # "\r", maybe followed by "\n"
                if end + 1 < length:
                    end += 1 if view[end + 1] == 0x0A else 0
                else:
                    self._after_cr = True
            start = end + 1
        self._pending.extend(view[start:])
        if len(self._pending) > self.max_line_bytes:
            raise line_too_long_error(self.max_line_bytes)

    def flush(self) -> Iterator[str]:
        """The last line when the body ends without a line end (empty: nothing is yielded)."""
        if self._at_start:
            self._at_start = False
            self._pending = bytearray(bytes(self._pending).removeprefix(UTF8_BOM))
        if self._pending:
            yield self._take_line(b"")

    def _take_line(self, tail: bytes) -> str:
        if len(self._pending) + len(tail) > self.max_line_bytes:
            raise line_too_long_error(self.max_line_bytes)
        raw = bytes(self._pending) + tail
        self._pending.clear()
        return raw.decode("utf-8", errors="replace")


def _next_line_end(data: bytes, start: int) -> int:
    """Index of the first ``\\n`` or ``\\r`` at or after ``start``, or -1."""
    newline = data.find(b"\n", start)
    carriage = data.find(b"\r", start)
    if newline < 0:
        return carriage
    if carriage < 0:
        return newline
    return min(newline, carriage)


class SseDecoder:
    """Turns text lines of a ``text/event-stream`` body into event data strings (one per event).

    Follows the SSE field rules that matter here: ``data:`` lines accumulate (joined by newlines),
    a blank line dispatches, comment lines (``:``) and other fields (``event``, ``id``, ``retry``)
    are ignored. Lines that are not fields at all are reported through :attr:`stray_lines`.
    """

    def __init__(self) -> None:
        self._data: list[str] = []
        self.stray_lines: list[str] = []

    def feed_line(self, line: str) -> Iterator[str]:
        """Consume one line (without its newline); yield the data of any event it completes."""
        if line == "":
            yield from self.flush()
            return
        if line.startswith(":"):
            return
        field, colon, value = line.partition(":")
        if not colon:
            self.stray_lines.append(line)
            return
        if value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._data.append(value)
        elif field not in ("event", "id", "retry"):
            self.stray_lines.append(line)

    def flush(self) -> Iterator[str]:
        """Dispatch the pending event, if any (also called when the body ends)."""
        if self._data:
            data = "\n".join(self._data)
            self._data = []
            yield data
