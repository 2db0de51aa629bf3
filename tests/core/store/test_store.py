from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from sessionref.store import SessionStore, StoreError, open_store


def user_message(text: str, kind: str = "user") -> dict[str, Any]:
    message = {
        "source": {"kind": kind},
        "content": [{"type": "text", "text": text}],
        "role": "user",
        "id": "m",
    }
    return {"type": "user/message", "data": message, "surfaceOp": "append"}


def assistant_message(text: str) -> dict[str, Any]:
    message = {
        "id": "a",
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "source": {"kind": "model", "provider": "demo", "model": "demo"},
    }
    return {
        "type": "assistant/message",
        "data": {"turn": 1, "step": 1, "message": message},
        "surfaceOp": "append",
    }


def chunk(text: str) -> dict[str, Any]:
    return {
        "type": "assistant/chunk",
        "data": {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "text": text}},
    }


def log_lines(store: SessionStore, session_id: str) -> list[dict[str, Any]]:
    path = next(store.root.glob(f"*/{session_id}/session.jsonl"))
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def test_create_session_writes_a_dsh_header(store: SessionStore) -> None:
    record = store.create_session(cwd="/work/app", session_id="s1", created_at=1234)
    assert (record.id, record.created_at, record.cwd) == ("s1", 1234, "/work/app")
    path = store.root / "--work-app--" / "s1" / "session.jsonl"
    assert path.read_text() == (
        '{"type":"session","version":0,"id":"s1","createdAt":1234,"cwd":"/work/app","delegationDepth":0}\n'
    )
    assert store.header("s1")["cwd"] == "/work/app"
    assert store.record("s1") == record
    no_cwd = store.create_session(cwd=None)
    assert "cwd" not in store.header(no_cwd.id)
    assert (store.root / "_no-cwd").is_dir()


def test_records_with_titles_gives_each_listed_id_and_leaves_the_rest_out(store: SessionStore) -> None:
    first = store.create_session(cwd="/work/app", session_id="s1", created_at=1)
    second = store.create_session(cwd=None, session_id="s2", created_at=2)
    store.append("s2", [user_message("hello")])
    store.rename("s1", "Plan")
    found = store.records_with_titles(["s2", "gone", "s1"])
    # The title is the label's: the first prompt until a rename names the session.
    assert found == {"s2": (store.record("s2"), "hello"), "s1": (store.record("s1"), "Plan")}
    assert found["s1"][0].created_at == first.created_at
    assert store.records_with_titles(["s2"])["s2"][0].last_activity > second.created_at
    store.close()
    with pytest.raises(StoreError) as caught:
        store.records_with_titles(["s1"])
    assert caught.value.code == "STORE_CLOSED"


def test_create_session_rejects_taken_or_bad_ids(store: SessionStore) -> None:
    store.create_session(cwd=None, session_id="s1")
    for session_id, code in [
        ("s1", "STORE_SESSION_EXISTS"),
        ("", "STORE_INVALID_ID"),
        ("a\ud800", "STORE_INVALID_ID"),
    ]:
        with pytest.raises(StoreError) as caught:
            store.create_session(cwd=None, session_id=session_id)
        assert caught.value.code == code
    with pytest.raises(StoreError) as caught:
        store.create_session(cwd=None, session_id="s2", created_at=-5)
    assert caught.value.code == "STORE_INVALID_EVENT"


def test_append_assigns_contiguous_seqs_and_envelope_order(store: SessionStore) -> None:
    store.create_session(cwd=None, session_id="s1")
    first = store.append("s1", [{"type": "turn/start", "data": {"turn": 1}}, user_message("hi")])
    second = store.append("s1", [chunk("he"), assistant_message("hello")])
    assert [event["seq"] for event in first + second] == [0, 1, 2, 3]
    assert list(first[1]) == ["type", "seq", "time", "data", "surfaceOp"]
    lines = log_lines(store, "s1")
    assert lines[1:] == first + second
    header, events = store.read_log("s1")
    assert header["id"] == "s1" and events == first + second
    assert store.append("s1", []) == []


@pytest.mark.parametrize(
    "event",
    [
        {"type": "user/message", "data": {}},
        {"type": "turn/start", "data": {}, "surfaceOp": "append"},
        {"type": "turn/start", "data": "text"},
        {"type": "", "data": {}},
        {"type": "session", "data": {}},
        {"type": "turn/start", "data": {}, "extra": 1},
        {"type": "turn/start", "data": {"x": float("nan")}},
        {"type": "turn/start", "data": {"x": object()}},
        {"type": "user/message", "data": {}, "surfaceOp": "append", "sourceEventSeqs": ["1"]},
        {"type": "user/message", "data": {}, "surfaceOp": {"op": "replace", "start": 0, "end": 0}},
    ],
)
def test_bad_events_are_rejected_and_nothing_is_written(store: SessionStore, event: dict) -> None:
    store.create_session(cwd=None, session_id="s1")
    store.append("s1", [user_message("kept")])
    with pytest.raises(StoreError) as caught:
        store.append("s1", [{"type": "turn/end", "data": {}}, event])
    assert caught.value.code in ("STORE_INVALID_EVENT", "STORE_INVALID_LOG")
    assert len(log_lines(store, "s1")) == 2


def test_append_to_unknown_session(store: SessionStore) -> None:
    with pytest.raises(StoreError) as caught:
        store.append("nope", [chunk("x")])
    assert caught.value.code == "STORE_SESSION_NOT_FOUND"
    assert caught.value.message == 'session "nope" not found'


def test_appends_are_fsynced_once_per_batch(store: SessionStore, monkeypatch: pytest.MonkeyPatch) -> None:
    store.create_session(cwd=None, session_id="s1")
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    store.append("s1", [chunk("a"), chunk("b"), chunk("c")])
    assert len(synced) == 1


def test_subscribers_see_appended_events_until_unsubscribed(store: SessionStore) -> None:
    store.create_session(cwd=None, session_id="s1")
    seen: list[tuple[str, list[dict]]] = []
    unsubscribe = store.subscribe(lambda session_id, events: seen.append((session_id, events)))
    written = store.append("s1", [chunk("a")])
    unsubscribe()
    store.append("s1", [chunk("b")])
    assert seen == [("s1", written)]


def test_a_failing_subscriber_does_not_break_appends(store: SessionStore) -> None:
    store.create_session(cwd=None, session_id="s1")

    def explode(session_id: str, events: list[dict]) -> None:
        raise RuntimeError("boom")

    store.subscribe(explode)
    assert store.append("s1", [chunk("a")])[0]["seq"] == 0


async def test_read_surface_folds_and_hides_chunks(store: SessionStore) -> None:
    store.create_session(cwd="/w", session_id="s1")
    store.append(
        "s1", [user_message("q"), chunk("a"), assistant_message("a"), {"type": "turn/end", "data": {}}]
    )
    snapshot = await store.read_surface("s1")
    assert [event["type"] for event in snapshot["events"]] == ["user/message", "assistant/message"]
    assert snapshot["capturedThroughSeq"] == 3
    assert snapshot["session"]["id"] == "s1"
    with pytest.raises(StoreError) as caught:
        await store.read_surface("missing")
    assert caught.value.code == "STORE_SESSION_NOT_FOUND"


async def test_titles_fallback_then_rename(store: SessionStore) -> None:
    store.create_session(cwd=None, session_id="s1")
    assert store.title("s1") is None
    store.append("s1", [user_message("context", kind="plugin")])
    assert store.title("s1") is None
    store.append("s1", [user_message("Fix the \x1b[31mparser crash when input is empty")])
    assert store.title("s1") == "Fix the parser crash when input is empty"
    store.append("s1", [user_message("second prompt")])
    assert store.title("s1") == "Fix the parser crash when input is empty"
    store.rename("s1", "  My \u202eparser\n notes ")
    assert store.title("s1") == "My parser notes"
    assert log_lines(store, "s1")[-1]["data"] == {
        "title": "My parser notes",
        "messageSeqs": [],
        "source": {"kind": "user"},
    }
    assert await store.read_titles(["s1", "unknown"]) == {"s1": "My parser notes", "unknown": None}
    with pytest.raises(StoreError) as caught:
        store.rename("s1", "\x1b[0m\u200b")
    assert caught.value.code == "STORE_INVALID_TITLE"


@pytest.mark.parametrize("placement", ["before", "after"])
def test_a_first_prompt_sent_with_mentions_is_titled_without_their_at_signs(
    store: SessionStore, placement: str
) -> None:
    labels = ["Fix flaky retry test in payments", "Speed up CI"]
    snapshot = {
        "type": "user/message",
        "data": {
            "source": {"kind": "session-reference", "references": [{"label": label} for label in labels]},
            "content": [{"type": "text", "text": "## Referenced sessions ..."}],
            "role": "user",
        },
        "surfaceOp": "append",
    }
    prompt = user_message("compare @Fix flaky retry test in payments with @Speed up CI please")
    store.create_session(cwd=None, session_id="s1")
    store.append("s1", [snapshot, prompt] if placement == "before" else [prompt, snapshot])
    assert store.title("s1") == "compare Fix flaky retry test in payments with Speed up CI…"


async def test_compaction_replaces_the_whole_surface(store: SessionStore) -> None:
    store.create_session(cwd=None, session_id="s1")
    store.append(
        "s1", [{"type": "turn/start", "data": {"turn": 1}}, user_message("q1"), assistant_message("a1")]
    )
    store.append("s1", [user_message("q2"), assistant_message("a2")])
    checkpoint = store.write_compaction("s1", "summary of q1..a2", compaction_id="c1")
    assert checkpoint["surfaceOp"] == {"op": "replace", "start": 1, "end": 4}
    assert checkpoint["sourceEventSeqs"] == [1, 2, 3, 4]
    assert checkpoint["data"]["source"] == {"kind": "plugin", "plugin": "compact", "compactionId": "c1"}
    store.append("s1", [user_message("q3")])
    snapshot = await store.read_surface("s1")
    assert [event["seq"] for event in snapshot["events"]] == [5, 6]
    again = store.write_compaction("s1", "all of it")
    assert again["sourceEventSeqs"] == [5, 6]
    assert [event["seq"] for event in (await store.read_surface("s1"))["events"]] == [7]


def test_compaction_needs_a_surface_and_a_summary(store: SessionStore) -> None:
    store.create_session(cwd=None, session_id="s1")
    with pytest.raises(StoreError) as caught:
        store.write_compaction("s1", "x")
    assert caught.value.code == "STORE_NOTHING_TO_COMPACT"
    with pytest.raises(StoreError) as caught:
        store.write_compaction("s1", "  ")
    assert caught.value.code == "STORE_INVALID_EVENT"


async def test_delete_session_removes_it_everywhere(store: SessionStore) -> None:
    store.create_session(cwd="/w", session_id="s1")
    store.create_session(cwd="/w", session_id="s2")
    store.delete_session("s1")
    assert [record.id for record in await store.list_sessions()] == ["s2"]
    assert not (store.root / "--w--" / "s1").exists()
    with pytest.raises(StoreError):
        store.title("s1")
    reopened = open_store(store.root)
    assert [record.id for record in await reopened.list_sessions()] == ["s2"]
    reopened.close()


async def test_list_sessions_newest_first_then_id(store: SessionStore) -> None:
    store.create_session(cwd=None, session_id="b", created_at=5)
    store.create_session(cwd=None, session_id="a", created_at=5)
    store.create_session(cwd=None, session_id="c", created_at=9)
    assert [record.id for record in await store.list_sessions()] == ["c", "a", "b"]


def test_closed_store_refuses_calls(tmp_path: Path) -> None:
    opened = open_store(tmp_path)
    opened.close()
    opened.close()
    with pytest.raises(StoreError) as caught:
        opened.create_session(cwd=None)
    assert caught.value.code == "STORE_CLOSED"


def test_store_root_that_is_a_file(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("x")
    with pytest.raises(StoreError) as caught:
        open_store(target)
    assert caught.value.code == "STORE_UNREADABLE"


def test_conversation_sources_name_each_log_and_change_when_it_grows(store: SessionStore) -> None:
    """Conversation search learns where each session is and whether it changed, without reading logs."""
    first = store.create_session(cwd="/a").id
    second = store.create_session(cwd=None).id
    before = {source.session_id: source for source in store.conversation_sources()}
    assert set(before) == {first, second}
    assert all(source.kind == "log" and Path(source.path).is_file() for source in before.values())
    store.append(first, [{"type": "turn/start", "data": {"turn": 1}}])
    after = {source.session_id: source for source in store.conversation_sources()}
    assert after[first].version != before[first].version
    assert after[second] == before[second]


async def test_recent_files_are_the_most_recently_active_first_with_or_without_the_ordered_list(
    store: SessionStore,
) -> None:
    for number, moment in enumerate([5_000, 1_000, 9_000, 3_000, 7_000]):
        store.create_session(cwd=None, session_id=f"s{number}", created_at=1_000)
        store.append(f"s{number}", [user_message(f"prompt {number}")], time_ms=1_790_000_000_000 + moment)

    def newest(count: int) -> list[str]:
        return [Path(path).parent.name for path in store.recent_files(count)]

    picked = newest(3)  # the ordered list is not built yet: picked from every session
    assert picked == ["s2", "s4", "s0"]
    assert [record.id for record in await store.list_sessions()][:3] == picked
    assert newest(3) == picked  # now read off the ordered list
    assert newest(99) == ["s2", "s4", "s0", "s3", "s1"]
    store.append("s1", [user_message("again")], time_ms=1_790_000_000_000 + 20_000)
    assert newest(3) == ["s1", "s2", "s4"]  # a kept answer never outlives a change
    store.delete_session("s2")
    assert newest(3) == ["s1", "s4", "s0"]
