"""Workspace.submit end to end over the real store and reference service."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
import zstandard
from sessionref.agent import Agent, AgentError, make_user_message
from sessionref.contract.errors import SessionReferenceError
from sessionref.contract.uri import format_session_reference_mention
from sessionref.host.settings import Settings
from sessionref.host.workspace import Workspace, merge_returned_drafts
from sessionref.models import DemoModel
from sessionref.service.abort import AbortSignal
from sessionref.store import SessionStore, encode_session_segment, open_store, project_key
from sessionref.store.layout import session_dir

CWD = "/home/ana/app"


class GatedModel:
    """Answers ``ok``; while ``gate`` is set to an Event the next reply waits for it after ``partial``."""

    name = "gated model"
    provider = "test"
    model = "gated"

    def __init__(self, context_window: int | None = 8192) -> None:
        self.context_window = context_window
        self.gate: asyncio.Event | None = None
        self.reached = asyncio.Event()
        self.calls: list[list[dict[str, Any]]] = []
        self.closed = False

    async def stream(self, messages: list[dict[str, Any]]) -> AsyncIterator[str]:
        self.calls.append(messages)
        gate, self.gate = self.gate, None
        if gate is not None:
            yield "partial"
            self.reached.set()
            await gate.wait()
        yield "ok"

    async def summarize(self, messages: list[dict[str, Any]]) -> str:
        return "summary"

    async def aclose(self) -> None:
        self.closed = True


@pytest.fixture
def model() -> GatedModel:
    return GatedModel()


def write_source(store: SessionStore, texts: list[tuple[str, str]], *, cwd: str = CWD) -> str:
    """A source session with (role, text) messages; returns its id."""
    session_id = store.create_session(cwd=cwd).id
    events = []
    for index, (role, text) in enumerate(texts):
        if role == "user":
            events.append({"type": "user/message", "data": make_user_message(text), "surfaceOp": "append"})
        else:
            message = {
                "id": f"a{index}",
                "role": "assistant",
                "content": [{"type": "text", "text": text}],
                "source": {"kind": "model", "provider": "test", "model": "t"},
            }
            events.append(
                {
                    "type": "assistant/message",
                    "data": {"turn": 1, "step": 1, "message": message},
                    "surfaceOp": "append",
                }
            )
    store.append(session_id, events)
    return session_id


def mention(session_id: str, label: str = "notes") -> str:
    return format_session_reference_mention({"sessionId": session_id, "label": label})


def user_messages(store: SessionStore, session_id: str) -> list[dict[str, Any]]:
    _, events = store.read_log(session_id)
    return [event for event in events if event["type"] == "user/message"]


def kinds(store: SessionStore, session_id: str) -> list[str]:
    return [event["data"]["source"]["kind"] for event in user_messages(store, session_id)]


async def test_plain_text_is_delivered_without_a_snapshot(store: SessionStore, model: GatedModel) -> None:
    ws = Workspace(store, model, cwd=CWD)
    agent = ws.new_session()
    assert agent.cwd == CWD
    assert ws.agent(agent.id) is agent
    result = await ws.submit(agent, "hello there")
    assert result.references == ()
    assert result.prepared.additional_context is None
    assert await result.ticket.outcome() == "entered"
    await agent.wait_idle()
    assert kinds(store, agent.id) == ["user"]
    assert model.calls[0] == [{"role": "user", "content": "hello there"}]


async def test_mention_delivers_snapshot_before_the_readable_prompt(
    store: SessionStore, model: GatedModel
) -> None:
    source = write_source(store, [("user", "pick a database"), ("assistant", "We chose SQLite.")])
    ws = Workspace(store, model, cwd=CWD)
    agent = ws.new_session()
    result = await ws.submit(agent, f"what did {mention(source)} decide?")
    assert result.references == ("notes",)
    await result.ticket.outcome()
    await agent.wait_idle()
    logged = user_messages(store, agent.id)
    assert [event["data"]["source"]["kind"] for event in logged] == ["session-reference", "user"]
    assert logged[1]["data"]["content"] == [{"type": "text", "text": "what did @notes decide?"}]
    snapshot_text = logged[0]["data"]["content"][0]["text"]
    assert snapshot_text.startswith("## Referenced sessions")
    assert "We chose SQLite." in snapshot_text
    assert model.calls[0][0]["content"] == snapshot_text
    assert model.calls[0][1] == {"role": "user", "content": "what did @notes decide?"}


async def test_submit_while_running_uses_the_same_order_in_the_same_turn(
    store: SessionStore, model: GatedModel
) -> None:
    source = write_source(store, [("user", "hello")])
    ws = Workspace(store, model, cwd=CWD)
    agent = ws.new_session()
    model.gate = gate = asyncio.Event()
    await ws.submit(agent, "first")
    await model.reached.wait()
    result = await ws.submit(agent, f"and {mention(source)}?")
    assert result.ticket.path == "running"
    gate.set()
    await agent.wait_idle()
    assert kinds(store, agent.id) == ["user", "session-reference", "user"]
    _, events = store.read_log(agent.id)
    assert [event["data"]["turn"] for event in events if event["type"] == "turn/start"] == [1]


async def test_after_placement_comes_from_settings(
    store: SessionStore, model: GatedModel, tmp_path: Path
) -> None:
    source = write_source(store, [("user", "hello")])
    settings = Settings(store_root=tmp_path / "store", placement="after")
    ws = Workspace(store, model, cwd=CWD, settings=settings)
    agent = ws.new_session()
    await ws.submit(agent, f"see {mention(source)}")
    await agent.wait_idle()
    assert kinds(store, agent.id) == ["user", "session-reference"]


@pytest.mark.parametrize(
    ("make_text", "code"),
    [
        (lambda agent, source: f"look at {mention(agent.id)}", "SESSION_REFERENCE_SELF_REFERENCE"),
        (lambda agent, source: f"look at {mention('no-such-session')}", "SESSION_REFERENCE_READ_FAILED"),
        (
            lambda agent, source: " ".join(mention(f"s{index}", f"s{index}") for index in range(4)),
            "SESSION_REFERENCE_TOO_MANY",
        ),
        (lambda agent, source: "bad @[x](dsh-session:###)", "SESSION_REFERENCE_INVALID_REFERENCE"),
    ],
)
async def test_reference_errors_happen_before_anything_is_queued(
    store: SessionStore, model: GatedModel, make_text: Any, code: str
) -> None:
    source = write_source(store, [("user", "hello")])
    ws = Workspace(store, model, cwd=CWD)
    agent = ws.new_session()
    baseline = agent.listener_counts()
    with pytest.raises(SessionReferenceError) as caught:
        await ws.submit(agent, make_text(agent, source))
    assert caught.value.code == code
    assert agent.status == "idle"
    assert agent.pending() == []
    assert agent.listener_counts() == baseline
    assert store.read_log(agent.id)[1] == []


async def test_aborted_signal_cancels_preparation(store: SessionStore, model: GatedModel) -> None:
    source = write_source(store, [("user", "hello")])
    ws = Workspace(store, model, cwd=CWD)
    agent = ws.new_session()
    signal = AbortSignal()
    signal.abort("user pressed Esc")
    with pytest.raises(SessionReferenceError) as caught:
        await ws.submit(agent, f"see {mention(source)}", signal=signal)
    assert caught.value.code == "SESSION_REFERENCE_CANCELLED"
    assert agent.status == "idle"
    assert store.read_log(agent.id)[1] == []


async def test_empty_text_is_refused(store: SessionStore, model: GatedModel) -> None:
    ws = Workspace(store, model, cwd=CWD)
    agent = ws.new_session()
    with pytest.raises(AgentError) as caught:
        await ws.submit(agent, "  \n ")
    assert caught.value.code == "AGENT_EMPTY_MESSAGE"
    assert agent.status == "idle"


async def test_recorded_snapshot_never_changes_when_the_source_changes_later(
    store: SessionStore, model: GatedModel
) -> None:
    source = write_source(store, [("user", "original question"), ("assistant", "original answer")])
    ws = Workspace(store, model, cwd=CWD)
    agent = ws.new_session()
    result = await ws.submit(agent, f"recall {mention(source)}")
    await agent.wait_idle()
    recorded = user_messages(store, agent.id)[0]
    assert recorded["data"] == result.prepared.additional_context
    raw_line = _raw_line(store, agent.id, recorded["seq"])

    store.append(
        source, [{"type": "user/message", "data": make_user_message("a later change"), "surfaceOp": "append"}]
    )
    assert user_messages(store, agent.id)[0] == recorded
    store.write_compaction(source, "compacted summary")
    assert user_messages(store, agent.id)[0] == recorded
    store.delete_session(source)
    assert user_messages(store, agent.id)[0] == recorded
    assert _raw_line(store, agent.id, recorded["seq"]) == raw_line
    assert "original answer" in recorded["data"]["content"][0]["text"]
    assert "a later change" not in recorded["data"]["content"][0]["text"]

    # The target keeps working: its next turn still sees the snapshot it recorded.
    await ws.submit(agent, "and now?")
    await agent.wait_idle()
    assert model.calls[-1][0]["content"] == recorded["data"]["content"][0]["text"]


async def test_context_window_feeds_the_automatic_budget(store: SessionStore) -> None:
    ws = Workspace(store, GatedModel(context_window=200_001), cwd=CWD)
    assert await ws.references.resolve_budget() == 160_000
    ws.model = GatedModel(context_window=None)  # read at each preparation, not captured once
    assert await ws.references.resolve_budget() == 65_536


async def test_truncated_reference_spills_its_transcript_under_the_store(
    store: SessionStore, model: GatedModel
) -> None:
    source = write_source(store, [("user", "x" * 40_000), ("assistant", "y" * 40_000), ("user", "last")])
    ws = Workspace(store, model, cwd=CWD)
    agent = ws.new_session()
    result = await ws.submit(agent, f"summarise {mention(source)}")
    text = result.prepared.additional_context["content"][0]["text"]
    assert "## Reference omissions" in text
    spilled = list((store.root / "spill").rglob("*.txt"))
    assert len(spilled) == 1
    assert str(spilled[0]) in text
    await agent.wait_idle()


async def test_close_cancels_running_turns_keeps_what_was_streamed_and_closes_the_model(
    store: SessionStore, model: GatedModel
) -> None:
    ws = Workspace(store, model, cwd=CWD)
    agent = ws.new_session()
    model.gate = asyncio.Event()
    await ws.submit(agent, "long task")
    await model.reached.wait()
    await ws.close(close_store=False)
    assert agent.status == "idle"
    assert model.closed  # its HTTP client is released once no turn can use it
    _, events = store.read_log(agent.id)
    assert events[-1]["data"] == {"turn": 1, "reason": "cancelled"}
    replies = [event for event in events if event["type"] == "assistant/message"]
    assert replies[0]["data"]["message"]["content"][0]["text"] == "partial"


async def test_unknown_session_agent_raises_a_store_error(store: SessionStore, model: GatedModel) -> None:
    ws = Workspace(store, model, cwd=CWD)
    with pytest.raises(Exception) as caught:
        ws.agent("missing")
    assert getattr(caught.value, "code", None) == "STORE_SESSION_NOT_FOUND"
    assert isinstance(ws.new_session(), Agent)


def _raw_line(store: SessionStore, session_id: str, seq: int) -> str:
    log = session_dir(store.root, session_id, CWD) / "session.jsonl"
    for line in log.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("seq") == seq and record.get("type") == "user/message":
            return line
    raise AssertionError(f"seq {seq} not found in {session_id}")


async def test_read_only_dsh_session_refuses_submit_before_preparing(
    tmp_path: Path, model: GatedModel
) -> None:
    root = tmp_path / "dsh"
    header = {
        "type": "session",
        "version": 1,
        "id": "dsh-1",
        "createdAt": 1,
        "cwd": CWD,
        "delegationDepth": 0,
    }
    log = root / project_key(CWD) / encode_session_segment("dsh-1") / "session.jsonl.zstd"
    log.parent.mkdir(parents=True)
    log.write_bytes(zstandard.ZstdCompressor().compress((json.dumps(header) + "\n").encode()))
    with closing(open_store(root)) as store:
        ws = Workspace(store, model, cwd=CWD)
        agent = ws.agent("dsh-1")
        with pytest.raises(AgentError) as caught:
            await ws.submit(agent, "hello")
        assert caught.value.code == "AGENT_READ_ONLY"
        assert agent.status == "idle"
        assert store.read_log("dsh-1")[1] == []


async def test_demo_model_answers_with_what_the_snapshot_carried(store: SessionStore) -> None:
    source = write_source(store, [("user", "pick a database"), ("assistant", "We chose SQLite.")])
    ws = Workspace(store, DemoModel(pace=0), cwd=CWD)
    agent = ws.new_session()
    await ws.submit(agent, f"what did {mention(source, 'db-notes')} decide?")
    await agent.wait_idle()
    _, events = store.read_log(agent.id)
    [reply] = [event for event in events if event["type"] == "assistant/message"]
    text = reply["data"]["message"]["content"][0]["text"]
    assert "db-notes" in text
    assert "SQLite" in text
    assert events[-1]["data"] == {"turn": 1, "reason": "completed"}


# -- sessions created by their first message ---------------------------------------------------------


async def test_a_draft_session_is_created_by_its_first_message(
    store: SessionStore, model: GatedModel
) -> None:
    ws = Workspace(store, model, cwd=CWD)
    before = [record.id for record in await store.list_sessions()]
    draft = ws.draft_session()
    assert draft.cwd == CWD
    assert [record.id for record in await store.list_sessions()] == before
    result = await ws.submit(draft, "hello")
    assert result.created is True
    assert result.agent.id == draft.id
    await result.agent.wait_idle()
    assert draft.id in [record.id for record in await store.list_sessions()]
    assert kinds(store, draft.id) == ["user"]


async def test_a_draft_session_whose_first_message_fails_is_never_created(
    store: SessionStore, model: GatedModel
) -> None:
    ws = Workspace(store, model, cwd=CWD)
    draft = ws.draft_session("/elsewhere")
    with pytest.raises(SessionReferenceError) as caught:
        await ws.submit(draft, f"look at {mention(draft.id)}")
    assert caught.value.code == "SESSION_REFERENCE_SELF_REFERENCE"
    with pytest.raises(AgentError):
        await ws.submit(draft, "   ")
    assert [record.id for record in await store.list_sessions()] == []


# -- queued messages: visible, and handed back when the reply is stopped ------------------------------


async def test_a_message_sent_while_running_is_listed_as_queued_until_the_step_takes_it(
    store: SessionStore, model: GatedModel
) -> None:
    source = write_source(store, [("user", "hello")])
    ws = Workspace(store, model, cwd=CWD)
    changes: list[str] = []
    ws.on_queue_change(changes.append)
    agent = ws.new_session()
    model.gate = gate = asyncio.Event()
    await ws.submit(agent, "first")
    await model.reached.wait()
    draft = f"and {mention(source)}?"
    await ws.submit(agent, draft)
    [queued] = ws.queued(agent)
    assert (queued.draft, queued.text, queued.references) == (draft, "and @notes?", ("notes",))
    assert len(agent.pending()) == 2  # the snapshot waits too, but is not a message of the user's
    gate.set()
    await agent.wait_idle()
    assert ws.queued(agent) == []
    assert changes and set(changes) == {agent.id}


async def test_stop_hands_queued_messages_back_and_delivers_nothing(
    store: SessionStore, model: GatedModel
) -> None:
    source = write_source(store, [("user", "hello")])
    ws = Workspace(store, model, cwd=CWD)
    returned: list[tuple[str, list[str], list[str]]] = []
    ws.on_drafts_returned(
        lambda session_id, drafts: returned.append(
            (session_id, [d.draft for d in drafts], [d.reason for d in drafts])
        )
    )
    agent = ws.new_session()
    model.gate = asyncio.Event()
    first = await ws.submit(agent, "first")
    await model.reached.wait()
    second = await ws.submit(agent, f"see {mention(source)}")
    third = await ws.submit(agent, "and this")
    drafts = await ws.stop(agent)
    assert [d.draft for d in drafts] == [f"see {mention(source)}", "and this"]
    assert returned == [(agent.id, [f"see {mention(source)}", "and this"], ["cancelled", "cancelled"])]
    assert agent.pending() == [] and ws.queued(agent) == []
    assert await first.ticket.outcome() == "entered"
    assert await second.ticket.outcome() == "discarded"
    assert await third.ticket.outcome() == "discarded"
    assert agent.status == "idle"
    # Nothing of the stopped messages reaches the log, now or with the next message.
    await ws.submit(agent, "next")
    await agent.wait_idle()
    assert kinds(store, agent.id) == ["user", "user"]
    texts = [event["data"]["content"][0]["text"] for event in user_messages(store, agent.id)]
    assert texts == ["first", "next"]


async def test_stop_on_an_idle_agent_returns_nothing(store: SessionStore, model: GatedModel) -> None:
    ws = Workspace(store, model, cwd=CWD)
    agent = ws.new_session()
    assert await ws.stop(agent) == []
    assert await ws.stop(ws.draft_session()) == []
    assert await ws.stop(None) == []


@pytest.mark.parametrize(
    ("drafts", "current", "merged"),
    [
        (["one"], "", "one"),
        (["one", "two"], "typing", "one\n\ntwo\n\ntyping"),
        (["  "], "typing", "typing"),
        ([], "typing", "typing"),
    ],
)
def test_returned_drafts_come_before_what_is_being_typed(
    drafts: list[str], current: str, merged: str
) -> None:
    assert merge_returned_drafts(drafts, current) == merged
