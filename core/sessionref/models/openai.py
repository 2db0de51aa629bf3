"""A streaming chat model for any OpenAI-compatible ``/chat/completions`` endpoint, over httpx.

Every failure becomes a :class:`ModelError` with a stable code; no httpx exception escapes.
Deltas already yielded before a failure stay yielded, so the caller keeps what the user saw.

One model holds one ``httpx.AsyncClient`` (its connection pool), created by the first call and
closed by :meth:`OpenAIChatModel.aclose`, which the host calls on shutdown (`Workspace.close`).
A client belongs to the event loop it was created on: a call on another loop gets a new one.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import aclosing
from typing import Any, Final
from urllib.parse import urlsplit

import httpx
from pydantic import ValidationError

from sessionref.models.base import (
    DEFAULT_DEADLINE,
    MODEL_AUTH,
    MODEL_BAD_REQUEST,
    MODEL_BAD_RESPONSE,
    MODEL_HTTP_ERROR,
    MODEL_STREAM_DROPPED,
    MODEL_TIMEOUT,
    MODEL_UNREACHABLE,
    ModelError,
    one_line_excerpt,
    validate_messages,
)
from sessionref.models.openai_stream import (
    EXCERPT_LIMIT,
    Deadline,
    StreamLimits,
    body_pieces,
    read_event_stream,
    send_following_redirects,
    server_error_text,
    whole_completion_text,
)
from sessionref.models.openai_wire import ChatCompletionRequest, ServerErrorBody, WireMessage

ERROR_BODY_LIMIT: Final = 2048

# Context windows (tokens) of well-known model ids; the longest matching prefix wins.
KNOWN_CONTEXT_WINDOWS: Final[Mapping[str, int]] = {
    "gpt-3.5-turbo": 16_385,
    "gpt-4": 8_192,
    "gpt-4-32k": 32_768,
    "gpt-4-turbo": 128_000,
    "gpt-4o": 128_000,
    "gpt-4o-mini": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-4.1-mini": 1_047_576,
    "gpt-4.1-nano": 1_047_576,
    "gpt-5": 400_000,
    "o1": 200_000,
    "o3": 200_000,
    "o3-mini": 200_000,
    "o4-mini": 200_000,
}

STATUS_HINTS: Final[Mapping[int, str]] = {
    404: "; check OPENAI_BASE_URL and SESSIONREF_MODEL",
    429: "; the server is rate-limiting or out of quota, try again later",
}

SUMMARY_INSTRUCTION: Final = (
    "Summarize the conversation below for a compaction checkpoint. Keep decisions, facts, open "
    "questions and the user's goals; be concise; write plain text."
)


def known_context_window(model: str) -> int | None:
    """The context window of a well-known model id (``openai/gpt-4o`` style prefixes allowed), else None."""
    bare = model.rsplit("/", 1)[-1].lower()
    matches = [prefix for prefix in KNOWN_CONTEXT_WINDOWS if bare == prefix or bare.startswith(prefix + "-")]
    return KNOWN_CONTEXT_WINDOWS[max(matches, key=len)] if matches else None


class OpenAIChatModel:
    """Streams replies from ``POST {base_url}/chat/completions`` with ``stream: true``."""

    name: str
    provider: str
    model: str
    context_window: int | None

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None,
        context_window: int | None = None,
        timeout: float = 60,
        deadline: float = DEFAULT_DEADLINE,
        limits: StreamLimits | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.name = model
        host = urlsplit(self.base_url).hostname or ""
        self.provider = "openai" if host == "api.openai.com" else "openai-compatible"
        self.context_window = context_window if context_window is not None else known_context_window(model)
        self.timeout = timeout
        self.deadline = deadline
        self.limits = limits if limits is not None else StreamLimits()
        self._clock = clock  # None: the event loop's clock (tests inject one to step the deadline)
        self._api_key = api_key
        self._http: httpx.AsyncClient | None = None
        self._http_loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        return f"OpenAIChatModel(base_url={self.base_url!r}, model={self.model!r})"

    @property
    def endpoint(self) -> str:
        """The full chat-completions URL this model posts to."""
        return f"{self.base_url}/chat/completions"

    def _client(self) -> httpx.AsyncClient:
        """This model's client on the running loop (created on first use, or for a new loop)."""
        loop = asyncio.get_running_loop()
        if self._http is None or self._http.is_closed or self._http_loop is not loop:
            # A client left on a finished loop cannot be closed from this one; it is dropped.
            self._http = httpx.AsyncClient(timeout=httpx.Timeout(self.timeout), follow_redirects=False)
            self._http_loop = loop
        return self._http

    async def aclose(self) -> None:
        """Close the HTTP client and its connections (a later call opens a new one)."""
        client, self._http, self._http_loop = self._http, None, None
        if client is not None and not client.is_closed:
            await client.aclose()

    def _request_body(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        pairs = validate_messages(messages)
        request = ChatCompletionRequest(
            model=self.model, messages=[WireMessage(role=role, content=content) for role, content in pairs]
        )
        return request.model_dump()

    def _headers(self) -> dict[str, str]:
        # identity: a compressed body could expand far past what the size limits count
        headers = {"Accept": "text/event-stream", "Accept-Encoding": "identity"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    async def stream(self, messages: list[dict[str, Any]]) -> AsyncIterator[str]:
        """Yield the reply's text deltas; raise ModelError (never an httpx error) on any failure.

        Bounded by the idle ``timeout`` between reads, the whole-call ``deadline`` and ``limits``
        (see :mod:`sessionref.models.openai_stream`); deltas yielded before a failure stay yielded.
        """
        body = self._request_body(messages)
        deadline = Deadline(self.deadline, self._clock)
        started = False
        try:
            response = await send_following_redirects(
                self._client(),
                self.endpoint,
                body=body,
                headers=self._headers(),
                deadline=deadline,
                max_redirects=self.limits.max_redirects,
            )
            try:
                if response.status_code >= 400:
                    raise await self._status_error(response, deadline)
                started = True
                content_type = response.headers.get("content-type", "")
                if content_type.startswith("application/json"):
                    pieces = body_pieces(response, self.limits.max_reply_bytes, deadline)
                    yield whole_completion_text(b"".join([piece async for piece in pieces]))
                    return
                async with aclosing(read_event_stream(response, self.limits, deadline)) as deltas:
                    async for delta in deltas:
                        yield delta
            finally:
                await response.aclose()
        except httpx.TimeoutException as error:
            raise ModelError(MODEL_TIMEOUT, self._timeout_message(started)) from error
        except (httpx.RemoteProtocolError, httpx.ReadError) as error:
            if started:
                raise ModelError(
                    MODEL_STREAM_DROPPED, "the model server closed the connection in the middle of the reply"
                ) from error
            raise ModelError(MODEL_UNREACHABLE, self._unreachable_message(error)) from error
        except (httpx.InvalidURL, httpx.UnsupportedProtocol) as error:
            raise ModelError(
                MODEL_BAD_REQUEST, f"invalid model server URL {self.base_url!r}; check OPENAI_BASE_URL"
            ) from error
        except httpx.HTTPError as error:
            code = MODEL_STREAM_DROPPED if started else MODEL_UNREACHABLE
            raise ModelError(code, self._unreachable_message(error)) from error

    def _timeout_message(self, started: bool) -> str:
        phase = "while streaming the reply" if started else "before answering"
        silence = f"{self.timeout:g} s"
        return f"the model server did not respond within {silence} {phase} (SESSIONREF_MODEL_TIMEOUT)"

    def _unreachable_message(self, error: httpx.HTTPError) -> str:
        reason = one_line_excerpt(str(error), 120) or type(error).__name__
        return f"cannot reach the model server at {self.base_url} ({reason}); check OPENAI_BASE_URL"

    async def _status_error(self, response: httpx.Response, deadline: Deadline) -> ModelError:
        pieces = body_pieces(response, ERROR_BODY_LIMIT, deadline, strict=False)
        excerpt = _error_excerpt(b"".join([piece async for piece in pieces]))
        status = response.status_code
        if status in (401, 403):
            hint = "check OPENAI_API_KEY" if self._api_key else "no API key was sent; set OPENAI_API_KEY"
            detail = f": {excerpt}" if excerpt else ""
            message = f"the model server refused the request (HTTP {status}); {hint}{detail}"
            return ModelError(MODEL_AUTH, message)
        hint = STATUS_HINTS.get(status, "")
        return ModelError(
            MODEL_HTTP_ERROR, f"the model server answered HTTP {status}: {excerpt or '(empty body)'}{hint}"
        )

    async def summarize(self, messages: list[dict[str, Any]]) -> str:
        """Ask the model for a compaction summary of ``messages``; raise ModelError if it gives none."""
        pairs = validate_messages(messages)
        transcript = "\n\n".join(f"[{role}]\n{content}" for role, content in pairs)
        prompt = [
            {"role": "system", "content": SUMMARY_INSTRUCTION},
            {"role": "user", "content": transcript},
        ]
        summary = "".join([delta async for delta in self.stream(prompt)]).strip()
        if not summary:
            raise ModelError(MODEL_BAD_RESPONSE, "the model returned an empty summary")
        return summary


def _error_excerpt(raw: bytes) -> str:
    """A short, inert description of an error response body (its ``error.message`` when JSON)."""
    text = raw.decode("utf-8", errors="replace")
    try:
        parsed = json.loads(text)
    except ValueError:
        return one_line_excerpt(text, EXCERPT_LIMIT)
    if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
        try:
            return server_error_text(ServerErrorBody.model_validate(parsed["error"]))
        except ValidationError:
            pass
    return one_line_excerpt(text, EXCERPT_LIMIT)
