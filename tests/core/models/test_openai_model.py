"""OpenAIChatModel against a real loopback server: streaming, and every failure as a stable ModelError."""

from __future__ import annotations

import asyncio
import json
import socket

import pytest
from fake_chat_server import (
    FakeChatServer,
    chunked_then_cut,
    delta_chunk,
    sse_event,
    stall_after,
    status,
    stream_of,
)
from sessionref.models import (
    MODEL_AUTH,
    MODEL_BAD_REQUEST,
    MODEL_BAD_RESPONSE,
    MODEL_HTTP_ERROR,
    MODEL_STREAM_DROPPED,
    MODEL_TIMEOUT,
    MODEL_UNREACHABLE,
    ModelError,
    OpenAIChatModel,
)

QUESTION = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello?"}]


def model_for(
    server: FakeChatServer, *, api_key: str | None = "sk-test", timeout: float = 10
) -> OpenAIChatModel:
    return OpenAIChatModel(base_url=server.base_url, model="gpt-4o-mini", api_key=api_key, timeout=timeout)


async def collect(model: OpenAIChatModel, received: list[str]) -> None:
    async for delta in model.stream(QUESTION):
        received.append(delta)


async def test_streams_deltas_until_done_and_sends_an_openai_request(chat_server: FakeChatServer) -> None:
    chat_server.responder = stream_of(
        sse_event({"choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}]}),
        b": keep-alive comment\n\n",
        sse_event(delta_chunk("Hel")),
        sse_event(delta_chunk("lo")),
        sse_event(delta_chunk(None, "stop")),
        sse_event({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2}}),
        sse_event("[DONE]"),
    )
    received: list[str] = []
    await collect(model_for(chat_server), received)

    assert received == ["Hel", "lo"]
    [request] = chat_server.requests
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.body == {"model": "gpt-4o-mini", "messages": QUESTION, "stream": True}


async def test_no_authorization_header_without_a_key(chat_server: FakeChatServer) -> None:
    chat_server.responder = stream_of(sse_event(delta_chunk("ok", "stop")), sse_event("[DONE]"))
    received: list[str] = []
    await collect(model_for(chat_server, api_key=None), received)
    assert received == ["ok"]
    assert "authorization" not in chat_server.requests[0].headers


async def test_a_finish_reason_without_done_still_completes(chat_server: FakeChatServer) -> None:
    chat_server.responder = stream_of(sse_event(delta_chunk("all")), sse_event(delta_chunk(" done", "stop")))
    received: list[str] = []
    await collect(model_for(chat_server), received)
    assert received == ["all", " done"]


async def test_a_json_completion_is_accepted_from_servers_that_ignore_stream(
    chat_server: FakeChatServer,
) -> None:
    choice = {"index": 0, "message": {"role": "assistant", "content": "whole reply"}, "finish_reason": "stop"}
    body = json.dumps({"choices": [choice]}).encode()
    chat_server.responder = status(200, body)
    received: list[str] = []
    await collect(model_for(chat_server), received)
    assert received == ["whole reply"]


@pytest.mark.parametrize("code", [401, 403])
async def test_rejected_key_is_model_auth_naming_the_env_var(chat_server: FakeChatServer, code: int) -> None:
    chat_server.responder = status(
        code, b'{"error":{"message":"Incorrect API key provided","type":"invalid"}}'
    )
    with pytest.raises(ModelError) as caught:
        await collect(model_for(chat_server), [])
    assert caught.value.code == MODEL_AUTH
    assert "OPENAI_API_KEY" in caught.value.message
    assert f"HTTP {code}" in caught.value.message
    assert "Incorrect API key provided" in caught.value.message


async def test_server_error_is_http_error_with_status_and_an_inert_excerpt(
    chat_server: FakeChatServer,
) -> None:
    chat_server.responder = status(500, b"upstream \x1b[31mexploded\x1b[0m\n" + b"x" * 5000, "text/plain")
    with pytest.raises(ModelError) as caught:
        await collect(model_for(chat_server), [])
    assert caught.value.code == MODEL_HTTP_ERROR
    assert "HTTP 500" in caught.value.message
    assert "exploded" in caught.value.message
    assert "\x1b" not in caught.value.message
    assert len(caught.value.message) < 400


async def test_unknown_model_hints_at_the_settings_to_check(chat_server: FakeChatServer) -> None:
    chat_server.responder = status(404, b'{"error":{"message":"The model `gpt-9` does not exist"}}')
    with pytest.raises(ModelError) as caught:
        await collect(model_for(chat_server), [])
    assert caught.value.code == MODEL_HTTP_ERROR
    assert "HTTP 404" in caught.value.message and "does not exist" in caught.value.message
    assert "SESSIONREF_MODEL" in caught.value.message


async def test_error_object_inside_the_stream_is_http_error(chat_server: FakeChatServer) -> None:
    chat_server.responder = stream_of(sse_event({"error": {"message": "overloaded", "type": "server_error"}}))
    with pytest.raises(ModelError) as caught:
        await collect(model_for(chat_server), [])
    assert caught.value.code == MODEL_HTTP_ERROR
    assert "overloaded" in caught.value.message


async def test_connection_closed_mid_chunked_stream_is_dropped_and_keeps_earlier_deltas(
    chat_server: FakeChatServer,
) -> None:
    chat_server.responder = chunked_then_cut(
        sse_event(delta_chunk("partial ")), sse_event(delta_chunk("text"))
    )
    received: list[str] = []
    with pytest.raises(ModelError) as caught:
        await collect(model_for(chat_server), received)
    assert caught.value.code == MODEL_STREAM_DROPPED
    assert received == ["partial ", "text"]


async def test_body_ending_without_done_or_finish_reason_is_dropped(chat_server: FakeChatServer) -> None:
    chat_server.responder = stream_of(sse_event(delta_chunk("only this")))
    received: list[str] = []
    with pytest.raises(ModelError) as caught:
        await collect(model_for(chat_server), received)
    assert caught.value.code == MODEL_STREAM_DROPPED
    assert received == ["only this"]


async def test_server_that_never_answers_times_out(chat_server: FakeChatServer) -> None:
    chat_server.responder = stall_after()
    with pytest.raises(ModelError) as caught:
        await collect(model_for(chat_server, timeout=0.2), [])
    assert caught.value.code == MODEL_TIMEOUT
    assert "before answering" in caught.value.message


async def test_stream_that_stalls_midway_times_out_and_keeps_earlier_deltas(
    chat_server: FakeChatServer,
) -> None:
    chat_server.responder = stall_after(sse_event(delta_chunk("first")))
    received: list[str] = []
    with pytest.raises(ModelError) as caught:
        await collect(model_for(chat_server, timeout=0.2), received)
    assert caught.value.code == MODEL_TIMEOUT
    assert "while streaming" in caught.value.message
    assert received == ["first"]


@pytest.mark.parametrize(
    "garbage",
    [
        sse_event("{not json"),
        sse_event({"choices": "not a list"}),
        b"<html>502 Bad Gateway</html>\n\n",
    ],
    ids=["broken-json", "wrong-shape", "not-sse"],
)
async def test_garbage_in_the_stream_is_bad_response(chat_server: FakeChatServer, garbage: bytes) -> None:
    chat_server.responder = stream_of(sse_event(delta_chunk("before")), garbage, sse_event("[DONE]"))
    received: list[str] = []
    with pytest.raises(ModelError) as caught:
        await collect(model_for(chat_server), received)
    assert caught.value.code == MODEL_BAD_RESPONSE
    assert received == ["before"]


async def test_refused_connection_is_unreachable_naming_the_base_url() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = OpenAIChatModel(base_url=f"http://127.0.0.1:{port}/v1", model="m", api_key=None, timeout=5)
    with pytest.raises(ModelError) as caught:
        await collect(model, [])
    assert caught.value.code == MODEL_UNREACHABLE
    assert f"127.0.0.1:{port}" in caught.value.message


async def test_invalid_base_url_is_a_clear_error() -> None:
    model = OpenAIChatModel(base_url="ftp://example.invalid", model="m", api_key=None)
    with pytest.raises(ModelError) as caught:
        await collect(model, [])
    assert caught.value.code == MODEL_BAD_REQUEST
    assert "OPENAI_BASE_URL" in caught.value.message


async def test_malformed_messages_are_rejected_before_any_request(chat_server: FakeChatServer) -> None:
    model = model_for(chat_server)
    with pytest.raises(ModelError) as caught:
        async for _ in model.stream([{"role": "tool", "content": "x"}]):
            pass
    assert caught.value.code == MODEL_BAD_REQUEST
    assert chat_server.requests == []


async def test_summarize_asks_the_model_and_returns_its_text(chat_server: FakeChatServer) -> None:
    chat_server.responder = stream_of(
        sse_event(delta_chunk(" The user said hi. ", "stop")), sse_event("[DONE]")
    )
    summary = await model_for(chat_server).summarize([{"role": "user", "content": "hi"}])
    assert summary == "The user said hi."
    sent = chat_server.requests[0].body["messages"]
    assert sent[0]["role"] == "system"
    assert "hi" in sent[1]["content"]


async def test_empty_summary_is_bad_response(chat_server: FakeChatServer) -> None:
    chat_server.responder = stream_of(sse_event(delta_chunk("", "stop")), sse_event("[DONE]"))
    with pytest.raises(ModelError) as caught:
        await model_for(chat_server).summarize([{"role": "user", "content": "hi"}])
    assert caught.value.code == MODEL_BAD_RESPONSE


def test_identity_and_context_window() -> None:
    openai = OpenAIChatModel(
        base_url="https://api.openai.com/v1/", model="gpt-4o-mini", api_key="sk-secret-9"
    )
    assert (openai.name, openai.provider, openai.model) == ("gpt-4o-mini", "openai", "gpt-4o-mini")
    assert openai.endpoint == "https://api.openai.com/v1/chat/completions"
    assert openai.context_window == 128_000
    assert "sk-secret-9" not in repr(openai)
    local = OpenAIChatModel(base_url="http://localhost:11434/v1", model="llama3", api_key=None)
    assert (local.provider, local.context_window) == ("openai-compatible", None)
    explicit = OpenAIChatModel(base_url="http://x/v1", model="gpt-4o", api_key=None, context_window=4096)
    assert explicit.context_window == 4096


async def test_cancelling_a_stalled_stream_propagates_cancellation(chat_server: FakeChatServer) -> None:
    chat_server.responder = stall_after(sse_event(delta_chunk("first")))
    first = asyncio.Event()
    received: list[str] = []

    async def consume() -> None:
        async for delta in model_for(chat_server).stream(QUESTION):
            received.append(delta)
            first.set()

    task = asyncio.create_task(consume())
    await first.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert received == ["first"]


async def test_closing_the_stream_early_is_clean(chat_server: FakeChatServer) -> None:
    chat_server.responder = stall_after(sse_event(delta_chunk("first")))
    stream = model_for(chat_server).stream(QUESTION)
    assert await anext(stream) == "first"
    await stream.aclose()
