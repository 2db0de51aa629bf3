"""One HTTP client per OpenAIChatModel: opened by the first call, reused, closed by `aclose`."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fake_chat_server import FakeChatServer, delta_chunk, sse_event, stream_of
from sessionref.models import OpenAIChatModel

QUESTION = [{"role": "user", "content": "hello?"}]


class CountedClients:
    """Every `httpx.AsyncClient` the model module creates, in order."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.created: list[httpx.AsyncClient] = []
        created = self.created

        class Counted(httpx.AsyncClient):
            def __init__(self, **options: Any) -> None:
                super().__init__(**options)
                created.append(self)

        monkeypatch.setattr("sessionref.models.openai.httpx.AsyncClient", Counted)


def answering(server: FakeChatServer) -> None:
    server.responder = stream_of(sse_event(delta_chunk("ok", "stop")), sse_event("[DONE]"))


async def reply(model: OpenAIChatModel) -> str:
    return "".join([delta async for delta in model.stream(QUESTION)])


async def test_calls_share_one_client_until_aclose(
    chat_server: FakeChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    clients = CountedClients(monkeypatch)
    answering(chat_server)
    model = OpenAIChatModel(base_url=chat_server.base_url, model="gpt-4o-mini", api_key=None)
    assert clients.created == []  # created lazily, by the first call
    assert [await reply(model), await reply(model), await model.summarize(QUESTION)] == ["ok"] * 3
    [client] = clients.created
    assert not client.is_closed
    await model.aclose()
    assert client.is_closed
    await model.aclose()  # closing twice is harmless


async def test_a_call_after_aclose_opens_a_new_client(
    chat_server: FakeChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    clients = CountedClients(monkeypatch)
    answering(chat_server)
    model = OpenAIChatModel(base_url=chat_server.base_url, model="gpt-4o-mini", api_key=None)
    assert await reply(model) == "ok"
    await model.aclose()
    assert await reply(model) == "ok"
    first, second = clients.created
    assert first.is_closed and not second.is_closed
    await model.aclose()
    assert second.is_closed


async def test_the_client_keeps_the_idle_timeout_and_follows_no_redirects_itself(
    chat_server: FakeChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    clients = CountedClients(monkeypatch)
    answering(chat_server)
    model = OpenAIChatModel(base_url=chat_server.base_url, model="gpt-4o-mini", api_key=None, timeout=7)
    assert await reply(model) == "ok"
    [client] = clients.created
    assert client.timeout == httpx.Timeout(7)
    assert client.follow_redirects is False  # same-host redirects are followed by the model, bounded
    await model.aclose()
