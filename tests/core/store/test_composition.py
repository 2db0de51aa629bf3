"""The store's parts: a state that collaborators are handed, one write lane call, conversation reads."""

from __future__ import annotations

import threading
from contextlib import closing
from pathlib import Path
from typing import Any

from foreign_fixtures import CART, fixture_roots, open_with
from sessionref.service.conversation_rows import conversation_rows
from sessionref.store import SessionStore
from sessionref.store.session_reads import SessionReads
from sessionref.store.session_writes import SessionWrites
from sessionref.store.store_state import StoreState


def message(role: str, text: str, message_id: str) -> dict[str, Any]:
    content = [{"type": "text", "text": text}]
    if role == "user":
        data: dict[str, Any] = {
            "source": {"kind": "user"},
            "content": content,
            "role": role,
            "id": message_id,
        }
        return {"type": "user/message", "surfaceOp": "append", "data": data}
    source = {"kind": "model", "provider": "p", "model": "m"}
    reply = {"id": message_id, "role": role, "content": content, "source": source}
    return {
        "type": "assistant/message",
        "surfaceOp": "append",
        "data": {"turn": 1, "step": 1, "message": reply},
    }


def test_readers_and_writers_work_on_a_state_alone(tmp_path: Path) -> None:
    state = StoreState(tmp_path / "store")
    try:
        writes, reads = SessionWrites(state), SessionReads(state)
        writes.create_session(cwd="/w", session_id="s1", created_at=7)
        writes.rename("s1", "Named")
        assert (reads.record("s1").cwd, reads.title("s1")) == ("/w", "Named")
        assert [event["type"] for event in reads.read_log("s1")[1]] == ["session/title"]
    finally:
        state.close()


async def test_on_lane_runs_the_call_off_the_loop_with_its_arguments(store: SessionStore) -> None:
    record = await store.on_lane("s1", store.create_session, cwd="/w", session_id="s1")
    assert record.id == "s1" and record.created_at > 0  # a left-out option keeps the method's default
    assert await store.on_lane("s1", threading.get_ident) != threading.get_ident()
    written = await store.on_lane("s1", store.append, "s1", [message("user", "hi", "m1")], time_ms=42)
    assert [(event["seq"], event["time"]) for event in written] == [(0, 42)]


async def test_read_conversation_is_the_projection_of_the_surface(store: SessionStore) -> None:
    store.create_session(cwd=None, session_id="s1")
    store.append(
        "s1", [message("user", "how do I restore", "m1"), message("assistant", "use pg_restore", "m2")]
    )
    conversation = store.read_conversation("s1")
    surface = await store.read_surface("s1")
    assert conversation.rows == conversation_rows(surface)
    assert [row.text for row in conversation.rows] == ["how do I restore", "use pg_restore"]
    assert conversation.through_seq == surface["capturedThroughSeq"]


async def test_read_conversation_of_a_log_with_a_bad_line_skips_only_that_line(store: SessionStore) -> None:
    store.create_session(cwd=None, session_id="s1")
    store.append("s1", [message("user", "before", "m1")])
    log = store.root / store.state.log_state("s1").path
    with log.open("a", encoding="utf-8") as stream:
        stream.write("this is not json\n")
    store.append("s1", [message("assistant", "after", "m2")])
    rows = store.read_conversation("s1").rows
    assert [row.text for row in rows] == ["before", "after"]
    assert rows == conversation_rows(await store.read_surface("s1"))


async def test_read_conversation_of_another_agents_session_goes_through_its_reader(tmp_path: Path) -> None:
    with closing(open_with(tmp_path, fixture_roots(tmp_path))) as store:
        conversation = store.read_conversation(CART)
        assert conversation.rows
        assert conversation.rows == conversation_rows(await store.read_surface(CART))
