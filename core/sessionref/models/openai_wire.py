"""Wire data of the OpenAI-compatible chat-completions API (the SSE readers are in ``sse``).

Only the fields we use are modelled; unknown fields are ignored so any compatible server works.
"""

from __future__ import annotations

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
