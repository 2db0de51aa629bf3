"""Wire data of the OpenAI-compatible chat-completions API, and an incremental SSE event reader.

Only the fields we use are modelled; unknown fields are ignored so any compatible server works.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

from pydantic import BaseModel, ConfigDict


class WireMessage(BaseModel):
    """One conversation message as sent to the server."""

    role: Literal["user", "assistant", "system"]
    content: str


class ChatCompletionRequest(BaseModel):
    """The request body of ``POST /chat/completions``."""

    model: str
    messages: list[WireMessage]
    stream: bool = True


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class StreamDelta(_Lenient):
    """The incremental part of one streamed choice."""

    content: str | None = None


class StreamChoice(_Lenient):
    """One choice in a streamed chunk."""

    delta: StreamDelta = StreamDelta()
    finish_reason: str | None = None


class ServerErrorBody(_Lenient):
    """An ``{"error": {...}}`` object some servers send inside the stream or as a response body."""

    message: str | None = None
    type: str | None = None
    code: str | int | None = None


class StreamChunk(_Lenient):
    """One ``data:`` payload of the stream (``chat.completion.chunk``)."""

    choices: list[StreamChoice] = []
    error: ServerErrorBody | None = None


class CompletionMessage(_Lenient):
    """The message of a non-streamed completion (servers that ignore ``stream: true``)."""

    content: str | None = None


class CompletionChoice(_Lenient):
    """One choice of a non-streamed completion."""

    message: CompletionMessage = CompletionMessage()
    finish_reason: str | None = None


class ChatCompletion(_Lenient):
    """A whole non-streamed completion body."""

    choices: list[CompletionChoice] = []
    error: ServerErrorBody | None = None


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
