"""A streaming chat model for any OpenAI-compatible ``/chat/completions`` endpoint, over httpx.

Every failure becomes a :class:`ModelError` with a stable code; no httpx exception escapes.
Deltas already yielded before a failure stay yielded, so the caller keeps what the user saw.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any, Final
from urllib.parse import urlsplit

import httpx
from pydantic import ValidationError

from sessionref.models.base import (
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
from sessionref.models.openai_wire import (
    ChatCompletion,
    ChatCompletionRequest,
    ServerErrorBody,
    SseDecoder,
    StreamChunk,
    WireMessage,
)

DEFAULT_BASE_URL: Final = "https://api.openai.com/v1"
DONE_SENTINEL: Final = "[DONE]"
ERROR_BODY_LIMIT: Final = 2048
EXCERPT_LIMIT: Final = 200

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
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.name = model
        host = urlsplit(self.base_url).hostname or ""
        self.provider = "openai" if host == "api.openai.com" else "openai-compatible"
        self.context_window = context_window if context_window is not None else known_context_window(model)
        self.timeout = timeout
        self._api_key = api_key

    def __repr__(self) -> str:
        return f"OpenAIChatModel(base_url={self.base_url!r}, model={self.model!r})"

    @property
    def endpoint(self) -> str:
        """The full chat-completions URL this model posts to."""
        return f"{self.base_url}/chat/completions"

    def _request_body(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        pairs = validate_messages(messages)
        request = ChatCompletionRequest(
            model=self.model, messages=[WireMessage(role=role, content=content) for role, content in pairs]
        )
        return request.model_dump()

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "text/event-stream"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    async def stream(self, messages: list[dict[str, Any]]) -> AsyncIterator[str]:
        """Yield the reply's text deltas; raise ModelError (never an httpx error) on any failure."""
        body = self._request_body(messages)
        started = False
        try:
            async with (
                httpx.AsyncClient(timeout=httpx.Timeout(self.timeout)) as client,
                client.stream("POST", self.endpoint, json=body, headers=self._headers()) as response,
            ):
                if response.status_code >= 400:
                    raise await self._status_error(response)
                started = True
                content_type = response.headers.get("content-type", "")
                if content_type.startswith("application/json"):
                    yield _whole_completion_text(await response.aread())
                    return
                async for delta in _read_event_stream(response):
                    yield delta
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
        return f"the model server did not respond within {self.timeout:g} s {phase}"

    def _unreachable_message(self, error: httpx.HTTPError) -> str:
        reason = one_line_excerpt(str(error), 120) or type(error).__name__
        return f"cannot reach the model server at {self.base_url} ({reason}); check OPENAI_BASE_URL"

    async def _status_error(self, response: httpx.Response) -> ModelError:
        raw = bytearray()
        async for piece in response.aiter_bytes():
            raw.extend(piece)
            if len(raw) >= ERROR_BODY_LIMIT:
                break
        excerpt = _error_excerpt(bytes(raw[:ERROR_BODY_LIMIT]))
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


async def _read_event_stream(response: httpx.Response) -> AsyncIterator[str]:
    """Yield content deltas from an SSE body until ``[DONE]``; a body ending early is a dropped stream."""
    decoder = SseDecoder()
    finished = False
    async for line in response.aiter_lines():
        for data in decoder.feed_line(line):
            if data.strip() == DONE_SENTINEL:
                return
            delta, finish = _parse_chunk(data)
            finished = finished or finish
            if delta:
                yield delta
        if decoder.stray_lines:
            raise ModelError(
                MODEL_BAD_RESPONSE,
                f"the model server sent a line that is not server-sent-event data: "
                f"{one_line_excerpt(decoder.stray_lines[0], EXCERPT_LIMIT)!r}",
            )
    for data in decoder.flush():
        if data.strip() == DONE_SENTINEL:
            return
        delta, finish = _parse_chunk(data)
        finished = finished or finish
        if delta:
            yield delta
    if not finished:
        raise ModelError(MODEL_STREAM_DROPPED, "the model's reply stream ended before it was complete")


def _parse_chunk(data: str) -> tuple[str, bool]:
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
        raise _reported_error(chunk.error)
    if not chunk.choices:
        return "", False
    choice = chunk.choices[0]
    return choice.delta.content or "", choice.finish_reason is not None


def _whole_completion_text(raw: bytes) -> str:
    """The text of a non-streamed completion body (for servers that ignore ``stream: true``)."""
    try:
        completion = ChatCompletion.model_validate_json(raw)
    except ValidationError as error:
        message = "the model server sent a JSON body that is not a completion"
        raise ModelError(MODEL_BAD_RESPONSE, message) from error
    if completion.error is not None:
        raise _reported_error(completion.error)
    if not completion.choices or completion.choices[0].message.content is None:
        raise ModelError(MODEL_BAD_RESPONSE, "the model server's completion has no message content")
    return completion.choices[0].message.content


def _reported_error(error: ServerErrorBody) -> ModelError:
    return ModelError(MODEL_HTTP_ERROR, f"the model server reported an error: {_server_error_text(error)}")


def _server_error_text(error: ServerErrorBody) -> str:
    parts = [str(part) for part in (error.message, error.type, error.code) if part not in (None, "")]
    return one_line_excerpt(" · ".join(parts), EXCERPT_LIMIT) or "(no details)"


def _error_excerpt(raw: bytes) -> str:
    """A short, inert description of an error response body (its ``error.message`` when JSON)."""
    text = raw.decode("utf-8", errors="replace")
    try:
        parsed = json.loads(text)
    except ValueError:
        return one_line_excerpt(text, EXCERPT_LIMIT)
    if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
        try:
            return _server_error_text(ServerErrorBody.model_validate(parsed["error"]))
        except ValidationError:
            pass
    return one_line_excerpt(text, EXCERPT_LIMIT)
