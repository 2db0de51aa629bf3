"""The bounded transport under :class:`~sessionref.models.openai.OpenAIChatModel`.

Three limits keep one model call from running or growing without end, each a :class:`ModelError`:

* a **whole-request deadline** (``MODEL_TIMEOUT``) besides httpx's idle timeout: every wait on the
  server (connecting, the answer head, each read of the body) is bounded by the time left, so a
  server that trickles keep-alive comments or one word at a time still ends on time;
* a bound on **one SSE line** and on the **whole body** (``MODEL_STREAM_TOO_LARGE``): the text of
  the events received before the bound is yielded first, so the caller keeps it;
* **redirects** (``MODEL_REDIRECT``): 301, 302, 307 and 308 to the same host are followed by
  sending the same POST again (at most :data:`MAX_REDIRECTS` times; never from HTTPS to HTTP);
  anything else, such as another host or a 303, is reported with the location it named.

The waits are bounded with ``asyncio.timeout`` around single awaits, never across a ``yield``,
so a consumer that awaits between deltas is never cancelled by our deadline.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Iterator, Mapping
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any, Final, TypeVar

import httpx
from pydantic import ValidationError

from sessionref.models.base import (
    MODEL_BAD_RESPONSE,
    MODEL_HTTP_ERROR,
    MODEL_REDIRECT,
    MODEL_STREAM_DROPPED,
    MODEL_TIMEOUT,
    ModelError,
    one_line_excerpt,
)
from sessionref.models.openai_wire import ChatCompletion, ServerErrorBody, StreamChunk
from sessionref.models.sse import SseDecoder, SseLineSplitter, reply_too_large_error

DONE_SENTINEL: Final = "[DONE]"
EXCERPT_LIMIT: Final = 200

"""Seconds one model call may take from sending the request to the last byte of the reply.

Long enough for a long reply from a slow model, short enough that a server trickling keep-alives
cannot hold a turn forever (``SESSIONREF_MODEL_DEADLINE`` / ``[model] deadline``)."""

MAX_SSE_LINE_BYTES: Final = 1024 * 1024
"""Bytes one line of the event stream may hold. A chunk is a few hundred bytes; servers that send
a whole reply as one event stay far below this."""

MAX_REPLY_BYTES: Final = 64 * 1024 * 1024
"""Bytes the whole reply body may hold. Streaming costs about 200 bytes of JSON per token, so this
still leaves room for replies of 300k tokens; a runaway server is cut within that."""

MAX_REDIRECTS: Final = 3
"""Same-host redirects followed for one call before giving up with ``MODEL_REDIRECT``."""

FOLLOWED_REDIRECTS: Final = frozenset({301, 302, 307, 308})
"""Statuses whose same-host location gets the same POST again (303 means "fetch something else")."""

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class StreamLimits:
    """The size and redirect bounds of one call (the defaults are the documented constants)."""

    max_line_bytes: int = MAX_SSE_LINE_BYTES
    max_reply_bytes: int = MAX_REPLY_BYTES
    max_redirects: int = MAX_REDIRECTS

    def __post_init__(self) -> None:
        if self.max_line_bytes < 1 or self.max_reply_bytes < 1 or self.max_redirects < 0:
            raise ValueError("stream limits must be positive (redirects: zero or more)")


class Deadline:
    """The end of one call; :meth:`within` bounds one await by the time left.

    ``clock`` (seconds, monotonic) defaults to the event loop's clock; tests pass a clock that
    advances per read to make "the deadline passed while data kept coming" deterministic.
    """

    def __init__(self, seconds: float, clock: Callable[[], float] | None = None) -> None:
        self.seconds = seconds
        self._clock = clock if clock is not None else asyncio.get_running_loop().time
        self._at = self._clock() + seconds

    async def within(self, awaitable: Awaitable[_T]) -> _T:
        """Await ``awaitable``; ``MODEL_TIMEOUT`` if the deadline passes first."""
        remaining = self._at - self._clock()
        if remaining <= 0:
            close = getattr(awaitable, "close", None)
            if close is not None:
                close()  # never awaited: closed so it does not warn
            raise self._expired()
        scope = asyncio.timeout(remaining)
        try:
            async with scope:
                return await awaitable
        except TimeoutError:
            if not scope.expired():
                raise
            raise self._expired() from None

    def _expired(self) -> ModelError:
        message = (
            f"the model's reply did not finish within the {self.seconds:g} s deadline "
            "(SESSIONREF_MODEL_DEADLINE); the text received so far is kept"
        )
        return ModelError(MODEL_TIMEOUT, message)


def redirect_target(current: httpx.URL, status: int, location: str | None) -> httpx.URL:
    """Where a redirect answer may be followed, or ``MODEL_REDIRECT`` saying why it is not."""
    shown = one_line_excerpt(location or "", EXCERPT_LIMIT)
    hint = "set OPENAI_BASE_URL to the server's real address"
    if not location:
        message = f"the model server answered HTTP {status} without a location; {hint}"
        raise ModelError(MODEL_REDIRECT, message)
    prefix = f"the model server redirected the request (HTTP {status}) to {shown!r}"
    try:
        target = current.join(location.strip())
    except (httpx.InvalidURL, ValueError):
        raise ModelError(MODEL_REDIRECT, f"{prefix}, which is not a valid URL; {hint}") from None
    if status not in FOLLOWED_REDIRECTS:
        raise ModelError(MODEL_REDIRECT, f"{prefix}; only 301, 302, 307 and 308 are followed; {hint}")
    if target.host != current.host:
        raise ModelError(MODEL_REDIRECT, f"{prefix}, another host, which is not followed; {hint}")
    if target.scheme not in ("http", "https") or (current.scheme == "https" and target.scheme != "https"):
        raise ModelError(MODEL_REDIRECT, f"{prefix}, away from HTTPS, which is not followed; {hint}")
    return target


async def send_following_redirects(
    client: httpx.AsyncClient,
    url: str,
    *,
    body: Mapping[str, Any],
    headers: Mapping[str, str],
    deadline: Deadline,
    max_redirects: int,
) -> httpx.Response:
    """POST ``body`` to ``url`` (streamed answer), following same-host redirects; the caller closes it."""
    target = httpx.URL(url)
    for _hop in range(max_redirects + 1):
        request = client.build_request("POST", target, json=body, headers=headers)
        response = await deadline.within(client.send(request, stream=True))
        if not 300 <= response.status_code < 400:
            return response
        await response.aclose()
        target = redirect_target(response.url, response.status_code, response.headers.get("location"))
    last = one_line_excerpt(str(target), EXCERPT_LIMIT)
    raise ModelError(
        MODEL_REDIRECT,
        f"the model server redirected the request more than {max_redirects} times (last to {last!r}); "
        "set OPENAI_BASE_URL to the server's real address",
    )


async def body_pieces(
    response: httpx.Response, limit: int, deadline: Deadline, *, strict: bool = True
) -> AsyncGenerator[bytes, None]:
    """The body in pieces, each read bounded by ``deadline``, at most ``limit`` bytes in all.

    Past ``limit``, the allowed part of the last piece is yielded, then ``MODEL_STREAM_TOO_LARGE``
    is raised (``strict``) or the body simply ends there (not ``strict``).
    """
    received = 0
    chunks = response.aiter_bytes()
    try:
        while True:
            piece = await deadline.within(anext(chunks, None))
            if piece is None:
                return
            room = limit - received
            if len(piece) > room:
                if room > 0:
                    yield piece[:room]
                if strict:
                    raise reply_too_large_error(limit)
                return
            received += len(piece)
            yield piece
    finally:
        if isinstance(chunks, AsyncGenerator):  # httpx's iterator is one; close it with the response
            await chunks.aclose()


async def read_event_stream(
    response: httpx.Response, limits: StreamLimits, deadline: Deadline
) -> AsyncGenerator[str, None]:
    """Yield content deltas from an SSE body until ``[DONE]``; a body ending early is a dropped stream."""
    finished = False
    async with aclosing(_event_data(response, limits, deadline)) as events:
        async for data in events:
            if data.strip() == DONE_SENTINEL:
                return
            delta, finish = parse_chunk(data)
            finished = finished or finish
            if delta:
                yield delta
    if not finished:
        raise ModelError(MODEL_STREAM_DROPPED, "the model's reply stream ended before it was complete")


async def _event_data(
    response: httpx.Response, limits: StreamLimits, deadline: Deadline
) -> AsyncGenerator[str, None]:
    """The data of each event of the body, the last one included when the body ends without a blank line."""
    splitter = SseLineSplitter(limits.max_line_bytes)
    decoder = SseDecoder()
    async with aclosing(body_pieces(response, limits.max_reply_bytes, deadline)) as pieces:
        async for piece in pieces:
            for data in _decoded(splitter.feed(piece), decoder):
                yield data
    for data in _decoded(splitter.flush(), decoder):
        yield data
    for data in decoder.flush():
        yield data


def _decoded(lines: Iterable[str], decoder: SseDecoder) -> Iterator[str]:
    """Feed ``lines`` to ``decoder``, yielding event data; ``MODEL_BAD_RESPONSE`` at a non-field line."""
    for line in lines:
        yield from decoder.feed_line(line)
        if decoder.stray_lines:
            raise ModelError(
                MODEL_BAD_RESPONSE,
                f"the model server sent a line that is not server-sent-event data: "
                f"{one_line_excerpt(decoder.stray_lines[0], EXCERPT_LIMIT)!r}",
            )


def parse_chunk(data: str) -> tuple[str, bool]:
    """(content delta, whether a finish_reason arrived) for one event; ModelError on bad data."""
    try:
        chunk = StreamChunk.model_validate_json(data)
    except ValidationError as error:
        raise ModelError(
            MODEL_BAD_RESPONSE,
            f"the model server sent stream data that is not a chat-completion chunk: "
            f"{one_line_excerpt(data, EXCERPT_LIMIT)!r}",
        ) from error
    if chunk.error is not None:
        raise reported_error(chunk.error)
    if not chunk.choices:
        return "", False
    choice = chunk.choices[0]
    return choice.delta.content or "", choice.finish_reason is not None


def whole_completion_text(raw: bytes) -> str:
    """The text of a non-streamed completion body (for servers that ignore ``stream: true``)."""
    try:
        completion = ChatCompletion.model_validate_json(raw)
    except ValidationError as error:
        message = "the model server sent a JSON body that is not a completion"
        raise ModelError(MODEL_BAD_RESPONSE, message) from error
    if completion.error is not None:
        raise reported_error(completion.error)
    if not completion.choices or completion.choices[0].message.content is None:
        raise ModelError(MODEL_BAD_RESPONSE, "the model server's completion has no message content")
    return completion.choices[0].message.content


def reported_error(error: ServerErrorBody) -> ModelError:
    """A ``MODEL_HTTP_ERROR`` for an ``{"error": ...}`` object the server sent."""
    return ModelError(MODEL_HTTP_ERROR, f"the model server reported an error: {server_error_text(error)}")


def server_error_text(error: ServerErrorBody) -> str:
    """One bounded, inert line describing a server's error object."""
    parts = [str(part) for part in (error.message, error.type, error.code) if part not in (None, "")]
    return one_line_excerpt(" · ".join(parts), EXCERPT_LIMIT) or "(no details)"
