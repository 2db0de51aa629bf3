"""The step loop: turn/step framing, claim order, steer/inject/followup, cancel, errors, compaction."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from agent_fakes import STEP_END, TURN, MemoryStore, Reply, ScriptedModel, events_of, log_order, user_texts
from sessionref.agent import Agent, AgentError, Enter, PreStepContext, Reject, make_user_message
from sessionref.models import ModelError

STEP_USER = [("step/start", None), ("user/message", "user")]
TURN_END = [("turn/end", None)]


def new_agent(store: Any, model: ScriptedModel, cwd: str | None = "/work/app") -> Agent:
    return Agent(store, store.create_session(cwd=cwd).id, model)


def turn_ends(store: Any, agent: Agent) -> list[dict[str, Any]]:
    return [event["data"] for event in events_of(store, agent.id, "turn/end")]


async def test_followup_when_idle_runs_one_framed_turn(store: Any, model: ScriptedModel) -> None:
    agent = new_agent(store, model)
    statuses: list[str] = []
    agent.on_status(statuses.append)
    agent.followup(make_user_message("hi"))
    assert agent.status == "running"
    await agent.wait_idle()
    assert agent.status == "idle"
    assert statuses == ["running", "idle"]
    assert log_order(store, agent.id) == TURN + STEP_USER + STEP_END + TURN_END
    assert turn_ends(store, agent) == [{"turn": 1, "reason": "completed"}]
    [reply] = events_of(store, agent.id, "assistant/message")
    assert reply["data"]["message"]["content"] == [{"type": "text", "text": "Hello there"}]
    assert reply["data"]["message"]["source"] == {"kind": "model", "provider": "test", "model": "scripted"}
    chunks = [event["data"]["chunk"] for event in events_of(store, agent.id, "assistant/chunk")]
    assert chunks == [{"type": "text-delta", "text": "Hello"}, {"type": "text-delta", "text": " there"}]
    assert model.calls == [[{"role": "user", "content": "hi"}]]
    assert agent.cwd == "/work/app"


async def test_steer_while_running_continues_the_same_turn(store: Any, model: ScriptedModel) -> None:
    agent = new_agent(store, model)
    held = model.hold(before=["a"], after=["b"])
    agent.followup(make_user_message("first"))
    await held.reached.wait()
    agent.steer(make_user_message("second"))
    held.gate.set()
    await agent.wait_idle()
    assert log_order(store, agent.id) == TURN + STEP_USER + STEP_END + STEP_USER + STEP_END + TURN_END
    steps = [(e["data"]["turn"], e["data"]["step"]) for e in events_of(store, agent.id, "step/start")]
    assert steps == [(1, 1), (1, 2)]
    assert model.calls[1] == [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "ab"},
        {"role": "user", "content": "second", "steer": True},  # claimed by step 2 of the running turn
    ]


async def test_followup_while_running_starts_its_own_turn_after(store: Any, model: ScriptedModel) -> None:
    agent = new_agent(store, model)
    held = model.hold()
    agent.followup(make_user_message("first"))
    await held.reached.wait()
    agent.followup(make_user_message("second"))
    held.gate.set()
    await agent.wait_idle()
    one_turn = TURN + STEP_USER + STEP_END + TURN_END
    assert log_order(store, agent.id) == one_turn + one_turn
    assert [end["turn"] for end in turn_ends(store, agent)] == [1, 2]


async def test_claim_takes_next_step_items_before_next_turn_items(store: Any, model: ScriptedModel) -> None:
    agent = new_agent(store, model)
    held = model.hold()
    agent.followup(make_user_message("first"))
    await held.reached.wait()
    agent.followup(make_user_message("queued turn"))
    agent.steer(make_user_message("steer"))
    held.gate.set()
    await agent.wait_idle()
    assert user_texts(store, agent.id) == ["first", "steer", "queued turn"]
    steps = [(e["data"]["turn"], e["data"]["step"]) for e in events_of(store, agent.id, "step/start")]
    assert steps == [(1, 1), (1, 2), (2, 1)]


async def test_inject_does_not_wake_and_rides_with_the_next_claim(store: Any, model: ScriptedModel) -> None:
    agent = new_agent(store, model)
    agent.inject(make_user_message("injected"))
    assert agent.status == "idle"
    assert events_of(store, agent.id, "turn/start") == []
    assert [m["content"][0]["text"] for m in agent.pending()] == ["injected"]
    agent.followup(make_user_message("prompt"))
    await agent.wait_idle()
    assert log_order(store, agent.id) == TURN + STEP_USER + [("user/message", "user")] + STEP_END + TURN_END
    assert user_texts(store, agent.id) == ["injected", "prompt"]
    assert agent.pending() == []


async def test_steer_when_idle_starts_a_turn(store: Any, model: ScriptedModel) -> None:
    agent = new_agent(store, model)
    agent.steer(make_user_message("go"))
    assert agent.status == "running"
    await agent.wait_idle()
    assert log_order(store, agent.id) == TURN + STEP_USER + STEP_END + TURN_END


async def test_queued_message_is_a_copy(store: Any, model: ScriptedModel) -> None:
    agent = new_agent(store, model)
    message = make_user_message("original")
    agent.followup(message)
    message["content"][0]["text"] = "mutated"
    await agent.wait_idle()
    assert user_texts(store, agent.id) == ["original"]


async def test_reject_discards_the_batch_and_ends_the_turn(store: Any, model: ScriptedModel) -> None:
    agent = new_agent(store, model)
    discarded: list[tuple[str, str]] = []
    agent.on_discard(lambda message, reason: discarded.append((message["content"][0]["text"], reason)))

    async def reject(ctx: PreStepContext, next_decision: Any) -> Reject:
        return Reject("not now")

    remove = agent.add_pre_step(reject)
    agent.inject(make_user_message("extra"))
    agent.followup(make_user_message("prompt"))
    await agent.wait_idle()
    assert log_order(store, agent.id) == TURN + TURN_END
    assert turn_ends(store, agent) == [{"turn": 1, "reason": "rejected", "rejectReason": "not now"}]
    assert discarded == [("extra", "rejected"), ("prompt", "rejected")]
    assert model.calls == []
    remove()
    agent.followup(make_user_message("again"))
    await agent.wait_idle()
    assert user_texts(store, agent.id) == ["again"]


async def test_enter_decision_replaces_the_batch_and_dropped_messages_are_reported(
    store: Any, model: ScriptedModel
) -> None:
    agent = new_agent(store, model)
    discarded: list[tuple[str, str]] = []
    entered: list[list[str]] = []
    agent.on_discard(lambda message, reason: discarded.append((message["content"][0]["text"], reason)))
    agent.on_entered(lambda messages: entered.append([m["content"][0]["text"] for m in messages]))
    note = make_user_message("note", {"kind": "plugin", "plugin": "test"})

    async def rewrite(ctx: PreStepContext, next_decision: Any) -> Enter:
        decision = await next_decision()
        assert isinstance(decision, Enter)
        kept = [m for m in decision.messages if m["content"][0]["text"] != "drop me"]
        return Enter([*kept, note])

    agent.add_pre_step(rewrite)
    agent.inject(make_user_message("drop me"))
    agent.followup(make_user_message("keep me"))
    await agent.wait_idle()
    assert log_order(store, agent.id) == TURN + STEP_USER + [("user/message", "plugin")] + STEP_END + TURN_END
    assert entered == [["keep me", "note"]]
    assert discarded == [("drop me", "dropped")]


async def test_failing_pre_step_listener_ends_the_turn_with_an_error(
    store: Any, model: ScriptedModel
) -> None:
    agent = new_agent(store, model)
    discarded: list[str] = []
    agent.on_discard(lambda message, reason: discarded.append(reason))

    async def broken(ctx: PreStepContext, next_decision: Any) -> Enter:
        raise RuntimeError("boom")

    agent.add_pre_step(broken)
    agent.followup(make_user_message("prompt"))
    await agent.wait_idle()
    assert log_order(store, agent.id) == TURN + TURN_END
    assert turn_ends(store, agent) == [
        {
            "turn": 1,
            "reason": "error",
            "error": "a pre-step listener failed: boom",
            "errorCode": "AGENT_PRE_STEP_FAILED",
        }
    ]
    assert discarded == ["error"]


async def test_cancel_keeps_streamed_text_and_leaves_queued_messages_queued(
    store: Any, model: ScriptedModel
) -> None:
    agent = new_agent(store, model)
    held = model.hold(before=["partial ", "answer"], after=["never"])
    agent.followup(make_user_message("first"))
    await held.reached.wait()
    agent.followup(make_user_message("queued"))
    assert await agent.cancel() is True
    assert agent.status == "idle"
    assert log_order(store, agent.id) == TURN + STEP_USER + STEP_END + TURN_END
    [reply] = events_of(store, agent.id, "assistant/message")
    assert reply["data"]["message"]["content"][0]["text"] == "partial answer"
    assert "".join(e["data"]["chunk"]["text"] for e in events_of(store, agent.id, "assistant/chunk")) == (
        "partial answer"
    )
    assert turn_ends(store, agent) == [{"turn": 1, "reason": "cancelled"}]
    assert [m["content"][0]["text"] for m in agent.pending()] == ["queued"]
    assert await agent.cancel() is False
    assert agent.resume() is True
    await agent.wait_idle()
    assert user_texts(store, agent.id) == ["first", "queued"]
    assert turn_ends(store, agent)[-1] == {"turn": 2, "reason": "completed"}


async def test_cancel_before_anything_streamed_writes_no_assistant_message(
    store: Any, model: ScriptedModel
) -> None:
    agent = new_agent(store, model)
    held = model.hold(before=[], after=["late"])
    agent.followup(make_user_message("first"))
    await held.reached.wait()
    await agent.cancel()
    assert log_order(store, agent.id) == TURN + STEP_USER + [("step/end", None)] + TURN_END


async def test_cancel_during_the_pre_step_chain_discards_the_claimed_batch(
    store: Any, model: ScriptedModel
) -> None:
    agent = new_agent(store, model)
    discarded: list[str] = []
    agent.on_discard(lambda message, reason: discarded.append(reason))
    entered_chain = ScriptedGate()

    async def slow(ctx: PreStepContext, next_decision: Any) -> Any:
        entered_chain.reached.set()
        await entered_chain.release.wait()
        return await next_decision()

    agent.add_pre_step(slow)
    agent.followup(make_user_message("first"))
    await entered_chain.reached.wait()
    await agent.cancel()
    assert log_order(store, agent.id) == TURN + TURN_END
    assert discarded == ["cancelled"]


async def test_message_sent_while_a_cancel_is_being_handled_still_runs(
    store: Any, model: ScriptedModel
) -> None:
    agent = new_agent(store, model)
    gate = ScriptedGate()

    async def slow(ctx: PreStepContext, next_decision: Any) -> Any:
        gate.reached.set()
        await gate.release.wait()
        return await next_decision()

    remove = agent.add_pre_step(slow)

    def send_while_stopping(message: dict[str, Any], reason: str) -> None:
        # Runs inside the cancelled driver, before it has stopped.
        remove()
        agent.followup(make_user_message("after cancel"))

    agent.on_discard(send_while_stopping)
    agent.followup(make_user_message("first"))
    await gate.reached.wait()
    await agent.cancel()
    await agent.wait_idle()
    assert user_texts(store, agent.id) == ["after cancel"]
    assert [end["reason"] for end in turn_ends(store, agent)] == ["cancelled", "completed"]


async def test_model_error_ends_the_turn_with_code_and_message_keeping_partial_text(
    store: Any, model: ScriptedModel
) -> None:
    agent = new_agent(store, model)
    model.script(Reply(before=["half"], error=ModelError("MODEL_AUTH", "the API key was rejected")))
    agent.followup(make_user_message("first"))
    agent.followup(make_user_message("second"))
    await agent.wait_idle()
    one_turn = TURN + STEP_USER + STEP_END + TURN_END
    assert log_order(store, agent.id) == one_turn + one_turn
    assert turn_ends(store, agent) == [
        {"turn": 1, "reason": "error", "error": "the API key was rejected", "errorCode": "MODEL_AUTH"},
        {"turn": 2, "reason": "completed"},
    ]
    first_reply = events_of(store, agent.id, "assistant/message")[0]
    assert first_reply["data"]["message"]["content"][0]["text"] == "half"


async def test_unexpected_model_failure_is_logged_as_an_error_turn(store: Any, model: ScriptedModel) -> None:
    agent = new_agent(store, model)
    model.script(Reply(before=[], error=ValueError("weird")))
    agent.followup(make_user_message("first"))
    await agent.wait_idle()
    assert log_order(store, agent.id) == TURN + STEP_USER + [("step/end", None)] + TURN_END
    assert turn_ends(store, agent) == [
        {"turn": 1, "reason": "error", "error": "weird", "errorCode": "AGENT_MODEL_FAILED"}
    ]


async def test_turn_numbers_continue_from_the_existing_log(store: Any, model: ScriptedModel) -> None:
    agent = new_agent(store, model)
    agent.followup(make_user_message("one"))
    await agent.wait_idle()
    again = Agent(store, agent.id, model)
    again.followup(make_user_message("two"))
    await again.wait_idle()
    assert [end["turn"] for end in turn_ends(store, agent)] == [1, 2]


async def test_chunks_are_appended_in_batches(store: Any, model: ScriptedModel) -> None:
    agent = new_agent(store, model)
    words = [f"w{index} " for index in range(100)]
    model.script(Reply(before=words))
    appends: list[int] = []
    real_append = store.append

    def counting_append(session_id: str, events: list[dict[str, Any]], **options: Any) -> Any:
        appends.append(sum(1 for event in events if event["type"] == "assistant/chunk"))
        return real_append(session_id, events, **options)

    store.append = counting_append
    agent.followup(make_user_message("long answer please"))
    await agent.wait_idle()
    chunks = events_of(store, agent.id, "assistant/chunk")
    assert [event["data"]["chunk"]["text"] for event in chunks] == words
    assert sum(appends) == 100
    assert len([count for count in appends if count]) < 100


async def test_read_only_session_refuses_messages_before_queueing(model: ScriptedModel) -> None:
    store = MemoryStore()
    session_id = store.create_session(cwd=None).id
    store.read_only.add(session_id)
    agent = Agent(store, session_id, model)
    for send in (agent.followup, agent.steer, agent.inject):
        with pytest.raises(AgentError) as caught:
            send(make_user_message("hi"))
        assert caught.value.code == "AGENT_READ_ONLY"
    assert agent.pending() == []
    assert agent.status == "idle"


async def test_malformed_message_is_refused(store: Any, model: ScriptedModel) -> None:
    agent = new_agent(store, model)
    with pytest.raises(AgentError) as caught:
        agent.followup({"role": "user", "content": "not blocks", "id": "x", "source": {"kind": "user"}})
    assert caught.value.code == "AGENT_INVALID_MESSAGE"
    assert agent.status == "idle"


async def test_compact_summarises_the_surface_into_a_checkpoint(store: Any, model: ScriptedModel) -> None:
    agent = new_agent(store, model)
    with pytest.raises(AgentError) as caught:
        await agent.compact()
    assert caught.value.code == "AGENT_NOTHING_TO_COMPACT"
    agent.followup(make_user_message("question"))
    await agent.wait_idle()
    checkpoint = await agent.compact()
    assert checkpoint["data"]["source"]["plugin"] == "compact"
    assert model.summaries == [
        [{"role": "user", "content": "question"}, {"role": "assistant", "content": "Hello there"}]
    ]
    surface = await store.read_surface(agent.id)
    assert [event["seq"] for event in surface["events"]] == [checkpoint["seq"]]
    agent.followup(make_user_message("next"))
    await agent.wait_idle()
    assert model.calls[-1] == [
        {"role": "user", "content": "summary of 2 messages"},
        {"role": "user", "content": "next"},
    ]


class ScriptedGate:
    """Two events: one the code under test sets when it arrives, one the test sets to let it go."""

    def __init__(self) -> None:
        self.reached = asyncio.Event()
        self.release = asyncio.Event()


async def test_cancel_before_the_turn_began_leaves_the_message_queued(
    store: Any, model: ScriptedModel
) -> None:
    agent = new_agent(store, model)
    agent.followup(make_user_message("early"))
    assert await agent.cancel() is True  # the driver had not run yet
    assert agent.status == "idle"
    assert store.read_log(agent.id)[1] == []
    assert [m["content"][0]["text"] for m in agent.pending()] == ["early"]
    agent.followup(make_user_message("later"))
    await agent.wait_idle()
    assert user_texts(store, agent.id) == ["early", "later"]
