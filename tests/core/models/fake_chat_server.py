"""A real HTTP server on loopback that plays an OpenAI-compatible chat-completions endpoint.

Each test scripts the response with a coroutine that writes raw bytes, so malformed, dropped and
stalled streams are exactly what a client would meet on a real socket.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class RecordedRequest:
    """What the client sent."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


Responder = Callable[[asyncio.StreamWriter, "FakeChatServer"], Awaitable[None]]


@dataclass
class FakeChatServer:
    """Serves one scripted response per connection and records every request."""

    responder: Responder | None = None
    requests: list[RecordedRequest] = field(default_factory=list)
    release: asyncio.Event = field(default_factory=asyncio.Event)
    _server: asyncio.Server | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        host, port = self._server.sockets[0].getsockname()[:2]
        return f"http://{host}:{port}/v1"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)

    async def stop(self) -> None:
        self.release.set()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request_line = (await reader.readline()).decode("latin-1").rstrip("\r\n")
            method, path, _ = request_line.split(" ", 2)
            headers: dict[str, str] = {}
            while True:
                line = (await reader.readline()).decode("latin-1").rstrip("\r\n")
                if not line:
                    break
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            raw = await reader.readexactly(int(headers.get("content-length", "0")))
            self.requests.append(RecordedRequest(method, path, headers, json.loads(raw) if raw else None))
            assert self.responder is not None, "the test did not script a response"
            await self.responder(writer, self)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()


def sse_event(payload: Any) -> bytes:
    """One server-sent event carrying ``payload`` (a string is sent as-is, anything else as JSON)."""
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return f"data: {data}\n\n".encode()


def delta_chunk(text: str | None, finish_reason: str | None = None) -> dict[str, Any]:
    """A ``chat.completion.chunk`` carrying one content delta."""
    delta: dict[str, Any] = {} if text is None else {"content": text}
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


def stream_of(*parts: bytes, content_type: str = "text/event-stream") -> Responder:
    """Respond 200 with a body that ends when the connection closes (``Connection: close``)."""

    async def respond(writer: asyncio.StreamWriter, server: FakeChatServer) -> None:
        writer.write(f"HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nConnection: close\r\n\r\n".encode())
        for part in parts:
            writer.write(part)
            await writer.drain()

    return respond


def chunked_then_cut(*parts: bytes) -> Responder:
    """Respond 200 with chunked encoding, send ``parts`` as chunks, then drop the connection mid-body."""

    async def respond(writer: asyncio.StreamWriter, server: FakeChatServer) -> None:
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        for part in parts:
            writer.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")
            await writer.drain()

    return respond


def status(code: int, body: bytes, content_type: str = "application/json") -> Responder:
    """Respond with an HTTP status and a complete body."""

    async def respond(writer: asyncio.StreamWriter, server: FakeChatServer) -> None:
        head = f"HTTP/1.1 {code} Status\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
        writer.write(head.encode() + b"Connection: close\r\n\r\n" + body)
        await writer.drain()

    return respond


def stall_after(*parts: bytes) -> Responder:
    """Send the 200 head and ``parts`` (none: not even the head), then say nothing until the test ends."""

    async def respond(writer: asyncio.StreamWriter, server: FakeChatServer) -> None:
        if parts:
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
            for part in parts:
                writer.write(part)
            await writer.drain()
        await server.release.wait()

    return respond


def in_turn(*responders: Responder) -> Responder:
    """Answer the n-th request with the n-th responder (the last one answers any further requests)."""

    async def respond(writer: asyncio.StreamWriter, server: FakeChatServer) -> None:
        index = min(len(server.requests), len(responders)) - 1
        await responders[index](writer, server)

    return respond


def redirect(code: int, location: str | None) -> Responder:
    """Answer with a redirect status and (unless None) a ``Location`` header, with an empty body."""

    async def respond(writer: asyncio.StreamWriter, server: FakeChatServer) -> None:
        head = f"HTTP/1.1 {code} Moved\r\nContent-Length: 0\r\nConnection: close\r\n"
        if location is not None:
            head += f"Location: {location}\r\n"
        writer.write(head.encode("utf-8", "surrogateescape") + b"\r\n")
        await writer.drain()

    return respond


def flood_after(
    *parts: bytes, filler: bytes = b": keep-alive\n\n", content_type: str = "text/event-stream"
) -> Responder:
    """Send the 200 head and ``parts``, then ``filler`` again and again until the client hangs up.

    A server that is never silent: only a bound on the whole call (time or size) can end the reply.
    """

    async def respond(writer: asyncio.StreamWriter, server: FakeChatServer) -> None:
        writer.write(f"HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nConnection: close\r\n\r\n".encode())
        for part in parts:
            writer.write(part)
        await writer.drain()
        while not server.release.is_set():
            writer.write(filler)
            await writer.drain()
            await asyncio.sleep(0)  # let the client run; the flood is paced only by the socket

    return respond


class SteppingClock:
    """A clock that moves ``step`` seconds forward each time it is read (a deadline test's time)."""

    def __init__(self, step: float) -> None:
        self.step = step
        self.now = 0.0
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        self.now += self.step
        return self.now
