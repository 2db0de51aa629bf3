from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from fake_chat_server import FakeChatServer

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


@pytest.fixture(autouse=True)
def no_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    """Loopback requests must reach the fake server directly, whatever proxy the machine uses."""
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
async def chat_server() -> AsyncIterator[FakeChatServer]:
    """A scripted OpenAI-compatible server on 127.0.0.1, port chosen by the OS."""
    server = FakeChatServer()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()
