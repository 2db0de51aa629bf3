"""deliver_with_references: the same log order idle and running, for both placements (D2/D3)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import pytest
from agent_fakes import STEP_END, TURN, ScriptedModel, events_of, log_order, user_texts
from sessionref.agent import (
    Agent,
    AgentError,
    PreStepContext,
    Reject,
    deliver_with_references,
    make_user_message,
)

SNAPSHOT = ("user/message", "session-reference")
PROMPT = ("user/message", "user")
PAIR = {"before": [SNAPSHOT, PROMPT], "after": [PROMPT, SNAPSHOT]}
TURN_END = [("turn/end", None)]


@dataclass
class Prepared:
    content: list[dict[str, Any]]
    additional_context: dict[str, Any] | None


def prepared(text: str = "what did @a decide?", snapshot: str | None = "## Referenced sessions") -> Prepared:
    context = None
    if snapshot is not None:
        source = {"kind": "session-reference", "form": "recall", "version": 1, "references": []}
        context = make_user_message(snapshot, source)
    return Prepared([{"type": "text", "text": text}], context)


def new_agent(store: Any, model: ScriptedModel, **options: Any) -> Agent:
    return Agent(store, store.create_session(cwd="/work/app").id, model, **options)


def logged_ids(store: Any, agent: Agent) -> list[str]:
    return [event["data"]["id"] for event in events_of(store, agent.id, "user/message")]


@pytest.mark.parametrize("placement", ["before", "after"])
async def test_idle_delivery_logs_the_pair_in_placement_order(
    store: Any, model: ScriptedModel, placement: str
) -> None:
    agent = new_agent(store, model, placement=placement)
    baseline = agent.listener_counts()
    message = prepared()
    ticket = deliver_with_references(agent, message)
    assert ticket.path == "idle"
    assert ticket.placement == placement
    assert await ticket.outcome() == "entered"
    await agent.wait_idle()
    assert log_order(store, agent.id) == [*TURN, ("step/start", None), *PAIR[placement], *STEP_END, *TURN_END]
    expected_ids = [message.additional_context["id"], ticket.prompt["id"]]
    assert logged_ids(store, agent) == (expected_ids if placement == "before" else expected_ids[::-1])
    assert agent.listener_counts() == baseline
    assert ticket.prompt["content"] == [{"type": "text", "text": "what did @a decide?"}]
    assert ticket.prompt["source"] == {"kind": "user"}


@pytest.mark.parametrize("placement", ["before", "after"])
async def test_running_delivery_logs_the_same_order_in_the_same_turn(
    store: Any, model: ScriptedModel, placement: str
) -> None:
    agent = new_agent(store, model)
    baseline = agent.listener_counts()
    held = model.hold()
    agent.followup(make_user_message("first"))
    await held.reached.wait()
    ticket = deliver_with_references(agent, prepared(), placement=placement)
    assert ticket.path == "running"
    held.gate.set()
    assert await ticket.outcome() == "entered"
    await agent.wait_idle()
    first_step = [("step/start", None), PROMPT, *STEP_END]
    second_step = [("step/start", None), *PAIR[placement], *STEP_END]
    assert log_order(store, agent.id) == TURN + first_step + second_step + TURN_END
    assert agent.listener_counts() == baseline


@pytest.mark.parametrize("placement", ["before", "after"])
async def test_idle_and_running_paths_agree_with_other_pending_items(
    store: Any, model: ScriptedModel, placement: str
) -> None:
    idle = new_agent(store, model)
    idle.inject(make_user_message("pending"))
    deliver_with_references(idle, prepared(), placement=placement)
    await idle.wait_idle()

    running = new_agent(store, model)
    held = model.hold()
    running.followup(make_user_message("first"))
    await held.reached.wait()
    running.inject(make_user_message("pending"))
    deliver_with_references(running, prepared(), placement=placement)
    held.gate.set()
    await running.wait_idle()

    def last_step(agent: Agent) -> list[tuple[str, str | None]]:
        order = log_order(store, agent.id)
        start = len(order) - 1 - order[::-1].index(("step/start", None))
        return order[start:]

    expected = [("step/start", None), PROMPT, *PAIR[placement], *STEP_END, *TURN_END]
    assert last_step(idle) == last_step(running) == expected
    assert user_texts(store, idle.id)[0] == "pending"


@pytest.mark.parametrize("running", [False, True])
async def test_rejection_drops_snapshot_with_prompt_and_leaves_no_listener(
    store: Any, model: ScriptedModel, running: bool
) -> None:
    agent = new_agent(store, model)
    baseline = agent.listener_counts()

    async def reject_prompts(ctx: PreStepContext, next_decision: Any) -> Any:
        if any(message["content"][0]["text"] == "what did @a decide?" for message in ctx.messages):
            return Reject("blocked by policy")
        return await next_decision()

    remove = agent.add_pre_step(reject_prompts)
    held = model.hold() if running else None
    if held is not None:
        agent.followup(make_user_message("first"))
        await held.reached.wait()
    message = prepared()
    ticket = deliver_with_references(agent, message)
    assert ticket.path == ("running" if running else "idle")
    if held is not None:
        held.gate.set()
    assert await ticket.outcome() == "rejected"
    await agent.wait_idle()
    remove()
    assert agent.listener_counts() == baseline
    assert message.additional_context["id"] not in logged_ids(store, agent)
    assert ticket.prompt["id"] not in logged_ids(store, agent)
    # Nothing was stranded: the next prompt enters alone.
    agent.followup(make_user_message("next"))
    await agent.wait_idle()
    assert log_order(store, agent.id)[-6:] == [*TURN, ("step/start", None), PROMPT, *STEP_END, *TURN_END]
    assert agent.pending() == []


async def test_idle_discard_before_claim_drops_snapshot_and_wrapper(store: Any, model: ScriptedModel) -> None:
    agent = new_agent(store, model)
    baseline = agent.listener_counts()
    reasons: list[str] = []
    agent.on_discard(lambda message, reason: reasons.append(reason))
    after_listener = agent.listener_counts()
    message = prepared()
    ticket = deliver_with_references(agent, message)
    assert agent.listener_counts()["pre_step"] == baseline["pre_step"] + 1
    assert agent.discard_pending(ticket.prompt["id"]) is True
    assert await ticket.outcome() == "discarded"
    assert agent.listener_counts() == after_listener
    await agent.wait_idle()
    assert events_of(store, agent.id, "user/message") == []
    agent.followup(make_user_message("next"))
    await agent.wait_idle()
    assert user_texts(store, agent.id) == ["next"]
    assert reasons == ["removed"]


async def test_running_discard_of_the_prompt_removes_its_queued_snapshot(
    store: Any, model: ScriptedModel
) -> None:
    agent = new_agent(store, model)
    baseline = agent.listener_counts()
    held = model.hold()
    agent.followup(make_user_message("first"))
    await held.reached.wait()
    message = prepared()
    ticket = deliver_with_references(agent, message)
    assert [m["id"] for m in agent.pending()] == [message.additional_context["id"], ticket.prompt["id"]]
    agent.discard_pending(ticket.prompt["id"])
    assert agent.pending() == []
    assert await ticket.outcome() == "discarded"
    held.gate.set()
    await agent.wait_idle()
    assert user_texts(store, agent.id) == ["first"]
    assert agent.listener_counts() == baseline


async def test_cancelled_turn_discards_a_claimed_pair(store: Any, model: ScriptedModel) -> None:
    agent = new_agent(store, model)
    baseline = agent.listener_counts()
    reached = ScriptedEvents()

    async def hold_step(ctx: PreStepContext, next_decision: Any) -> Any:
        reached.arrived.set()
        await reached.release.wait()
        return await next_decision()

    remove = agent.add_pre_step(hold_step)
    ticket = deliver_with_references(agent, prepared())
    await reached.arrived.wait()
    await agent.cancel()
    remove()
    assert await ticket.outcome() == "discarded"
    assert events_of(store, agent.id, "user/message") == []
    assert agent.listener_counts() == baseline


async def test_idle_wrapper_waits_for_the_batch_that_holds_its_prompt(
    store: Any, model: ScriptedModel
) -> None:
    agent = new_agent(store, model)
    held = model.hold()
    agent.followup(make_user_message("first"))
    await held.reached.wait()
    agent.followup(make_user_message("left queued"))
    await agent.cancel()
    assert agent.status == "idle"
    ticket = deliver_with_references(agent, prepared(), placement="after")
    assert ticket.path == "idle"
    assert await ticket.outcome() == "entered"
    await agent.wait_idle()
    assert user_texts(store, agent.id) == [
        "first",
        "left queued",
        "what did @a decide?",
        "## Referenced sessions",
    ]
    ends = [event["data"]["reason"] for event in events_of(store, agent.id, "turn/end")]
    assert ends == ["cancelled", "completed", "completed"]


@pytest.mark.parametrize("running", [False, True])
async def test_plain_message_without_snapshot(store: Any, model: ScriptedModel, running: bool) -> None:
    agent = new_agent(store, model)
    baseline = agent.listener_counts()
    held = model.hold() if running else None
    if held is not None:
        agent.followup(make_user_message("first"))
        await held.reached.wait()
    ticket = deliver_with_references(agent, prepared("plain", snapshot=None))
    assert ticket.context is None
    if held is not None:
        held.gate.set()
    assert await ticket.outcome() == "entered"
    await agent.wait_idle()
    assert user_texts(store, agent.id)[-1] == "plain"
    assert len(events_of(store, agent.id, "turn/start")) == 1
    assert agent.listener_counts() == baseline


async def test_invalid_snapshot_is_refused_before_anything_is_queued(
    store: Any, model: ScriptedModel
) -> None:
    agent = new_agent(store, model)
    baseline = agent.listener_counts()
    with pytest.raises(AgentError):
        deliver_with_references(agent, Prepared([{"type": "text", "text": "x"}], {"role": "user"}))
    assert agent.pending() == []
    assert agent.listener_counts() == baseline
    assert agent.status == "idle"


class ScriptedEvents:
    def __init__(self) -> None:
        self.arrived = asyncio.Event()
        self.release = asyncio.Event()
