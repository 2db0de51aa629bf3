"""A log that refuses writes mid-turn: the turn ends with the store's code, shown even unlogged;
a cancel never abandons a write half way."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

from agent_fakes import Reply, ScriptedModel, events_of
from sessionref.agent import Agent, TurnFailure, make_user_message
from sessionref.store import SessionStore, StoreError

LOCKED = StoreError("STORE_LOCK_TIMEOUT", "another sessionref process kept this session locked; try again")


def refuse_when(store: SessionStore, refuse: Callable[[list[dict[str, Any]]], bool]) -> list[list[str]]:
    """Make `store.append` raise STORE_LOCK_TIMEOUT for batches `refuse` picks; returns refused types."""
    original = store.append
    refused: list[list[str]] = []

    def append(session_id: str, events: Any, **options: Any) -> Any:
        batch = list(events)
        if refuse(batch):
            refused.append([event["type"] for event in batch])
            raise LOCKED
        return original(session_id, batch, **options)

    store.append = append  # type: ignore[method-assign]
    return refused


def new_agent(store: SessionStore, model: ScriptedModel) -> tuple[Agent, list[TurnFailure], list[str]]:
    agent = Agent(store, store.create_session(cwd="/w").id, model)
    failures: list[TurnFailure] = []
    discarded: list[str] = []
    agent.on_turn_error(failures.append)
    agent.on_discard(lambda message, reason: discarded.append(reason))
    return agent, failures, discarded


def has_chunks(batch: list[dict[str, Any]]) -> bool:
    return any(event["type"] == "assistant/chunk" for event in batch)


async def test_a_refused_chunk_batch_ends_the_turn_with_the_stores_code(
    store: SessionStore, model: ScriptedModel
) -> None:
    agent, failures, _ = new_agent(store, model)
    model.script(Reply(before=[f"w{n} " for n in range(80)]))
    refused = refuse_when(store, lambda batch: has_chunks(batch) and len(batch) == 32)
    agent.followup(make_user_message("long answer"))
    await agent.wait_idle()
    assert refused  # a full batch of chunks was refused
    [end] = [event["data"] for event in events_of(store, agent.id, "turn/end")]
    assert end["reason"] == "error" and end["errorCode"] == "STORE_LOCK_TIMEOUT"
    assert "locked" in end["error"]
    assert [event["type"] for event in store.read_log(agent.id)[1]][-2:] == ["step/end", "turn/end"]
    assert failures == [TurnFailure(agent.id, 1, "STORE_LOCK_TIMEOUT", LOCKED.message, logged=True)]
    assert agent.status == "idle"


async def test_a_log_that_refuses_everything_still_reports_the_turn_unlogged(
    store: SessionStore, model: ScriptedModel
) -> None:
    agent, failures, discarded = new_agent(store, model)
    refuse_when(store, lambda batch: batch[0]["type"] != "turn/start")
    agent.followup(make_user_message("hello"))
    await agent.wait_idle()
    assert [event["type"] for event in store.read_log(agent.id)[1]] == ["turn/start"]
    assert failures == [TurnFailure(agent.id, 1, "STORE_LOCK_TIMEOUT", LOCKED.message, logged=False)]
    assert discarded == ["error"]  # not in the log: handed back (a UI returns it as a draft)
    assert agent.status == "idle" and agent.pending() == []


async def test_a_turn_that_cannot_start_keeps_nothing_and_the_next_send_works(
    store: SessionStore, model: ScriptedModel
) -> None:
    agent, failures, discarded = new_agent(store, model)
    refusing = [True]
    refuse_when(store, lambda batch: refusing[0])
    agent.followup(make_user_message("first"))
    await agent.wait_idle()
    assert failures == [TurnFailure(agent.id, None, "STORE_LOCK_TIMEOUT", LOCKED.message, logged=False)]
    assert discarded == ["error"]
    refusing[0] = False
    agent.followup(make_user_message("second"))
    await agent.wait_idle()
    ends = [event["data"] for event in events_of(store, agent.id, "turn/end")]
    assert ends == [{"turn": 1, "reason": "completed"}]


async def test_a_cancel_during_a_write_waits_for_it_and_closes_the_step(
    store: SessionStore, model: ScriptedModel
) -> None:
    agent, _, discarded = new_agent(store, model)
    original = store.append
    reached, release = threading.Event(), threading.Event()

    def slow_step_start(session_id: str, events: Any, **options: Any) -> Any:
        if events[0]["type"] == "step/start":
            reached.set()
            release.wait(10)  # the disk is slow right now
        return original(session_id, events, **options)

    store.append = slow_step_start  # type: ignore[method-assign]
    entered: list[int] = []
    agent.on_entered(lambda messages: entered.append(len(messages)))
    agent.followup(make_user_message("hello"))
    assert await asyncio.to_thread(reached.wait, 10)
    cancelling = asyncio.ensure_future(agent.cancel())
    await asyncio.sleep(0)
    assert not cancelling.done()  # the write has not landed: the cancel waits for it
    release.set()
    assert await cancelling
    kinds = [event["type"] for event in store.read_log(agent.id)[1]]
    assert kinds == ["turn/start", "step/start", "user/message", "step/end", "turn/end"]
    assert events_of(store, agent.id, "turn/end")[0]["data"]["reason"] == "cancelled"
    assert entered == [1] and discarded == []  # the agent knows its message is in the log
    assert agent.status == "idle"
