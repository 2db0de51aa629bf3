"""The surface the agent keeps as it writes: a step's request equals the one a re-read of the log gives.

The log stays the source of truth: every model call below compares the request the agent built
from its kept surface with the conversation folded from a fresh read of the log, over turns with
a steer, an injection, a compaction, a rename written past the agent and an append by another
process (a second store on the same directory).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from agent_fakes import MemoryStore, ScriptedModel
from sessionref.agent import Agent, conversation_from_surface, make_user_message
from sessionref.store import SessionStore, open_store


class ReadCounting:
    """A store whose `read_surface` calls are counted (everything else goes to `inner`)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.surface_reads = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def read_surface(self, session_id: str) -> Any:
        self.surface_reads += 1
        return await self.inner.read_surface(session_id)


class RereadingModel(ScriptedModel):
    """A scripted model that, at each call, also folds a fresh read of the log for comparison."""

    def __init__(self, store: Any) -> None:
        super().__init__()
        self.store = store
        self.session_id = ""
        self.rereads: list[list[dict[str, Any]]] = []

    async def stream(self, messages: list[dict[str, Any]]) -> AsyncIterator[str]:
        surface = await self.store.read_surface(self.session_id)
        self.rereads.append(conversation_from_surface(surface["events"]))
        async for delta in super().stream(messages):
            yield delta


def without_steer(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{key: value for key, value in message.items() if key != "steer"} for message in messages]


async def test_requests_from_the_kept_surface_equal_a_reread_of_the_log(
    store: SessionStore, tmp_path: Path
) -> None:
    counting = ReadCounting(store)
    model = RereadingModel(store)
    agent = Agent(counting, store.create_session(cwd="/work/app").id, model)  # type: ignore[arg-type]
    model.session_id = agent.id

    agent.followup(make_user_message("one"))
    await agent.wait_idle()
    assert counting.surface_reads == 1  # the first request folds the log once

    held = model.hold(before=["a"], after=["b"])
    agent.followup(make_user_message("two"))
    await held.reached.wait()
    agent.inject(make_user_message("snapshot"))
    agent.steer(make_user_message("three"))
    held.gate.set()
    await agent.wait_idle()
    assert model.calls[-1][-2:] == [
        {"role": "user", "content": "snapshot", "steer": True},
        {"role": "user", "content": "three", "steer": True},
    ]

    checkpoint = await agent.compact()
    agent.followup(make_user_message("four"))
    await agent.wait_idle()
    assert model.calls[-1] == [
        {"role": "user", "content": checkpoint["data"]["content"][0]["text"]},
        {"role": "user", "content": "four"},
    ]
    assert counting.surface_reads == 1  # steps, the steer and the compaction kept the surface

    store.rename(agent.id, "renamed past the agent")
    other = open_store(Path(store.root))
    try:
        other.append(agent.id, [_user_event("from another process")])
    finally:
        other.close()
    agent.followup(make_user_message("five"))
    await agent.wait_idle()
    assert model.calls[-1][-2:] == [
        {"role": "user", "content": "from another process"},
        {"role": "user", "content": "five"},
    ]
    assert counting.surface_reads == 2  # the seq gap made the agent read the log again

    agent.followup(make_user_message("six"))
    await agent.wait_idle()
    assert counting.surface_reads == 2
    assert len(model.calls) == 6
    assert [without_steer(call) for call in model.calls] == model.rereads


async def test_a_failed_write_makes_the_next_request_read_the_log() -> None:
    store = MemoryStore()
    counting = ReadCounting(store)
    model = ScriptedModel()
    agent = Agent(counting, store.create_session(cwd=None).id, model)  # type: ignore[arg-type]
    agent.followup(make_user_message("one"))
    await agent.wait_idle()
    store.read_only.add(agent.id)
    agent.followup(make_user_message("refused"))  # writable was answered before: its turn/start fails
    await agent.wait_idle()
    store.read_only.discard(agent.id)
    agent.followup(make_user_message("two"))
    await agent.wait_idle()
    assert counting.surface_reads == 2
    surface = await store.read_surface(agent.id)
    assert model.calls[-1] == conversation_from_surface(surface["events"])[:-1]


def _user_event(text: str) -> dict[str, Any]:
    message = make_user_message(text)
    return {"type": "user/message", "data": message, "surfaceOp": "append"}
