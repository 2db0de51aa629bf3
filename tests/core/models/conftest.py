from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from fake_chat_server import FakeChatServer


@pytest.fixture
async def chat_server() -> AsyncIterator[FakeChatServer]:
    """A scripted OpenAI-compatible server on 127.0.0.1, port chosen by the OS."""
    server = FakeChatServer()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()
