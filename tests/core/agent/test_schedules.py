"""Random but reproducible schedules of sends, deliveries, cancels and releases.

Whatever the interleaving, the log stays well framed, every message is logged once, discarded
once or still queued, and a snapshot is logged exactly when its prompt is, right next to it.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from sessionref.agent import Agent, PreStepContext, Reject, deliver_with_references, make_user_message


class HeldModel:
    """Every reply streams one word, then waits until the test releases it."""

    name = provider = model = "held"
    context_window = None

    def __init__(self) -> None:
        self.gates: list[asyncio.Event] = []
        self.called = asyncio.Event()

    async def stream(self, messages: list[dict[str, Any]]) -> AsyncIterator[str]:
        gate = asyncio.Event()
        self.gates.append(gate)
        self.called.set()
        yield "word"
        await gate.wait()
        yield " end"

    async def summarize(self, messages: list[dict[str, Any]]) -> str:
        return "summary"


@dataclass
class Prepared:
    content: list[dict[str, Any]]
    additional_context: dict[str, Any] | None


async def settle(agent: Agent, model: HeldModel) -> None:
    """Release the reply in progress (if any) and wait for the next model call or for idleness."""
    model.called.clear()
    for gate in model.gates:
        gate.set()
    waiters = {
        asyncio.ensure_future(agent.wait_idle()),
        asyncio.ensure_future(model.called.wait()),
    }
    _, pending = await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    for waiter in pending:
        waiter.cancel()


def check_framing(events: list[dict[str, Any]]) -> None:
    turn = step = None
    turns = []
    for event in events:
        kind, data = event["type"], event["data"]
        if kind == "turn/start":
            assert turn is None
            turn = data["turn"]
            turns.append(turn)
        elif kind == "turn/end":
            assert turn == data["turn"] and step is None
            turn = None
        elif kind == "step/start":
            assert turn == data["turn"] and step is None
            step = data["step"]
        elif kind == "step/end":
            assert (turn, step) == (data["turn"], data["step"])
            step = None
        elif kind in ("user/message", "assistant/message", "assistant/chunk"):
            assert step is not None
    assert turn is None
    assert turns == list(range(1, len(turns) + 1))


@pytest.mark.parametrize("seed", range(20))
async def test_random_schedule_keeps_the_invariants(store: Any, seed: int) -> None:
    rng = random.Random(seed)
    model = HeldModel()
    agent = Agent(store, store.create_session(cwd="/w").id, model)
    baseline = agent.listener_counts()
    discarded: dict[str, str] = {}
    agent.on_discard(lambda message, reason: discarded.setdefault(message["id"], reason))

    async def reject_marked(ctx: PreStepContext, next_decision: Any) -> Any:
        decision = await next_decision()
        if any(m["content"][0]["text"].startswith("reject") for m in ctx.messages):
            return Reject("marked")
        return decision

    remove_rejecter = agent.add_pre_step(reject_marked)
    sent: list[str] = []
    pairs: list[tuple[str, str, str]] = []  # (prompt id, snapshot id, placement)
    for index in range(30):
        op = rng.choice(
            ["followup", "steer", "inject", "deliver", "deliver", "settle", "settle", "cancel", "drop"]
        )
        text = f"{'reject' if rng.random() < 0.15 else 'msg'} {index}"
        if op in ("followup", "steer", "inject"):
            message = make_user_message(text)
            getattr(agent, op)(message)
            sent.append(message["id"])
        elif op == "deliver":
            placement = rng.choice(["before", "after"])
            snapshot = make_user_message(f"snapshot {index}", {"kind": "session-reference"})
            ticket = deliver_with_references(
                agent, Prepared([{"type": "text", "text": text}], snapshot), placement=placement
            )
            sent.append(ticket.prompt["id"])
            pairs.append((ticket.prompt["id"], snapshot["id"], placement))
        elif op == "settle":
            await settle(agent, model)
        elif op == "cancel":
            await agent.cancel()
        elif op == "drop":
            prompts = [m for m in agent.pending() if m["source"]["kind"] == "user"]
            if prompts:
                agent.discard_pending(rng.choice(prompts)["id"])

    for _ in range(200):
        if agent.status == "idle" and not agent.resume():
            break
        await settle(agent, model)
    await agent.wait_idle()
    remove_rejecter()

    _, events = store.read_log(agent.id)
    check_framing(events)
    logged = [event["data"]["id"] for event in events if event["type"] == "user/message"]
    assert len(logged) == len(set(logged))
    assert agent.pending() == []
    for message_id in sent:
        assert (message_id in logged) != (message_id in discarded), message_id
    for prompt_id, snapshot_id, placement in pairs:
        assert (prompt_id in logged) == (snapshot_id in logged)
        if prompt_id in logged:
            at = logged.index(prompt_id)
            assert logged.index(snapshot_id) == (at - 1 if placement == "before" else at + 1)
    counts = agent.listener_counts()
    assert counts["pre_step"] == baseline["pre_step"]
    assert counts["entered"] == baseline["entered"]
