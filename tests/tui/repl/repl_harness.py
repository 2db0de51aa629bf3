"""A line mode driven through a pipe input, with a gate-controlled model and a seeded store.

`Harness.until(predicate)` waits for application, buffer, lookup and store
notifications and re-checks the predicate on each one: no sleeps, and a
generous overall timeout only as a guard against a hung test.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.input import PipeInput
from prompt_toolkit.output import DummyOutput
from sessionref.host.workspace import Workspace
from sessionref.store import SessionStore, open_store
from sessionref.store.errors import STORE_SESSION_NOT_FOUND, StoreError
from sessionref.textsearch.store_index import StoreConversationIndex
from sessionref_tui.repl.app import LineMode

HERE = "/home/ana/work"
GUARD_SECONDS = 10.0


class GatedModel:
    """A ChatModel that streams `Hello ` then waits for `gate` (when closed) before `world`."""

    name = "gated test model"
    provider = "test"
    model = "gated"
    context_window: int | None = 32_000

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.gate.set()
        self.calls: list[list[dict[str, Any]]] = []
        self.summary = "summary of everything so far"

    async def stream(self, messages: list[dict[str, Any]]) -> AsyncIterator[str]:
        self.calls.append(messages)
        yield "Hello "
        await self.gate.wait()
        yield "world\nsecond line"

    async def summarize(self, messages: list[dict[str, Any]]) -> str:
        return self.summary

    async def aclose(self) -> None:
        """Nothing to release."""


def user_event(text: str, message_id: str) -> dict[str, Any]:
    """A direct user message event."""
    data = {
        "source": {"kind": "user"},
        "content": [{"type": "text", "text": text}],
        "role": "user",
        "id": message_id,
    }
    return {"type": "user/message", "data": data, "surfaceOp": "append"}


def seed(store: SessionStore) -> None:
    """Two sessions to mention: `abnf-notes` (here, titled) and `abacus-id` (elsewhere, titled)."""
    store.create_session(cwd=HERE, session_id="abnf-notes", created_at=1_700_000_000_000)
    store.append("abnf-notes", [user_event("How do I parse ABNF?", "m1")])
    store.rename("abnf-notes", "ABNF parser notes")
    store.create_session(cwd="/srv/else", session_id="abacus-id", created_at=1_700_000_100_000)
    store.append("abacus-id", [user_event("counting beads", "m2")])
    store.rename("abacus-id", "Abacus")


@dataclass
class Harness:
    """A running line mode and the handles a test needs."""

    mode: LineMode
    pipe: PipeInput
    store: SessionStore
    model: GatedModel
    workspace: Workspace
    task: asyncio.Task[int] | None = None
    keys_processed: int = 0
    """Key presses the application's key processor has taken so far (bound or only buffered)."""
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    def poke(self, *_args: object) -> None:
        self._changed.set()

    def start(self) -> None:
        buffer = self.mode.session.default_buffer
        for event in (
            buffer.on_text_changed,
            buffer.on_completions_changed,
            self.mode.lookups.on_update,
            self.mode.session.app.after_render,
        ):
            event += self.poke
        self.mode.session.app.key_processor.after_key_press += self._count_key
        self.store.subscribe(self.poke)
        self.task = asyncio.get_running_loop().create_task(self.mode.run())
        self.task.add_done_callback(self.poke)

    def _count_key(self, _processor: object) -> None:
        self.keys_processed += 1
        self.poke()

    async def until(self, predicate: Callable[[], object]) -> None:
        """Return once `predicate()` is true, re-checking after every notification."""
        async with asyncio.timeout(GUARD_SECONDS):
            while not predicate():
                self._changed.clear()
                await self._changed.wait()

    def type(self, text: str) -> None:
        """Send keys (`\\r` = Enter, `\\n` = Ctrl+J, `\\x03` = Ctrl+C, `\\t` = Tab)."""
        self.pipe.send_text(text)

    @property
    def text(self) -> str:
        return self.mode.session.default_buffer.text

    @property
    def completions(self) -> list[Any]:
        state = self.mode.session.default_buffer.complete_state
        return list(state.completions) if state is not None else []

    def events(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """The log of `session_id` (default: the current session); [] while it is not on disk."""
        try:
            return self.store.read_log(session_id or self.mode.agent.id)[1]
        except StoreError as error:
            if error.code != STORE_SESSION_NOT_FOUND:
                raise
            return []

    async def session_ids(self) -> set[str]:
        """The ids of every session on disk."""
        return {record.id for record in await self.store.list_sessions()}

    def printed(self, needle: str) -> bool:
        return any(needle in line for line in self.mode.transcript.lines)

    def count(self, needle: str) -> int:
        """How many printed lines contain `needle`."""
        return sum(needle in line for line in self.mode.transcript.lines)

    async def stop(self) -> int:
        assert self.task is not None
        if not self.task.done():
            self.mode.request_exit()
        return await self.task


async def open_harness(
    root: Path, pipe: PipeInput, *, session_id: str | None = None, seeded: bool = True, said: bool = False
) -> Harness:
    """A seeded (or empty) store, a workspace in HERE, and a line mode on `pipe` (not started yet).

    `said=True` gives the workspace a conversation index (the menu's second group); the line mode
    builds it in the background once it runs."""
    store = open_store(root)
    if seeded:
        seed(store)
    model = GatedModel()
    conversations = StoreConversationIndex(store) if said else None
    workspace = Workspace(store, model, cwd=HERE, conversations=conversations)
    mode = LineMode(
        workspace,
        session_id=session_id,
        input=pipe,
        output=DummyOutput(),
        debounce=0,
        history=InMemoryHistory(),
    )
    return Harness(mode, pipe, store, model, workspace)
