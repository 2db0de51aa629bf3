"""The offline demo model: deterministic replies streamed word by word at a configurable pace."""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import AsyncIterator
from typing import Any, Final

from sessionref.models.base import DEFAULT_DEMO_PACE, validate_messages
from sessionref.models.demo_reply import compose_demo_reply, compose_demo_summary

DEMO_CONTEXT_WINDOW: Final = 32_768

_WORD = re.compile(r"\s*\S+|\s+")


class DemoModel:
    """A model that needs no network and says so; its reply reflects what it received.

    ``pace`` is the number of seconds between streamed words (0 streams as fast as the event loop
    allows while still yielding control between words, so a turn can be cancelled or steered).
    The same messages always produce the same reply.
    """

    name: str
    provider: str
    model: str
    context_window: int | None

    def __init__(self, *, pace: float = DEFAULT_DEMO_PACE) -> None:
        if not math.isfinite(pace) or pace < 0:
            raise ValueError("pace must be a finite, non-negative number of seconds")
        self.pace = pace
        self.name = "demo model"
        self.provider = "demo"
        self.model = "demo"
        self.context_window = DEMO_CONTEXT_WINDOW

    def reply_for(self, messages: list[dict[str, Any]]) -> str:
        """The complete reply ``stream`` would yield for ``messages`` (joined deltas equal this)."""
        validate_messages(messages)
        return compose_demo_reply(messages)

    async def stream(self, messages: list[dict[str, Any]]) -> AsyncIterator[str]:
        """Yield the demo reply one word (with its leading whitespace) at a time."""
        reply = self.reply_for(messages)
        for index, word in enumerate(_WORD.findall(reply)):
            if index:
                await asyncio.sleep(self.pace)
            yield word

    async def summarize(self, messages: list[dict[str, Any]]) -> str:
        """A deterministic summary: ``Summary of N messages:`` then the first line of the early ones."""
        validate_messages(messages)
        await asyncio.sleep(0)
        return compose_demo_summary(messages)

    async def aclose(self) -> None:
        """Nothing to release: the demo model holds no connection."""
