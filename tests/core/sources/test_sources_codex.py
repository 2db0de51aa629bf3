"""Codex CLI: grouping rollout files, one source of truth for turns, compaction, rename-index titles."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from histories import ROOTS, copy_root, write_jsonl
from sessionref.contract.projection import project_session_conversation
from sessionref.sources import ForeignSourceError, ForeignSourceErrorCode, codex

SESSION = "0a0b0c0d-1111-4222-8333-444455556666"


def line(kind: str, payload: dict[str, Any], second: int = 0) -> dict[str, Any]:
    return {"timestamp": f"2026-03-04T10:00:{second:02d}.000Z", "type": kind, "payload": payload}


def meta(second: int = 0, **extra: Any) -> dict[str, Any]:
    payload = {
        "id": SESSION,
        "timestamp": f"2026-03-04T10:00:{second:02d}.000Z",
        "cwd": "/home/ana/api",
        **extra,
    }
    return line("session_meta", payload, second)


def said(event: str, message: str, **extra: Any) -> dict[str, Any]:
    return line("event_msg", {"type": event, "message": message, **extra})


def item(role: str, *texts: str) -> dict[str, Any]:
    kind = "input_text" if role == "user" else "output_text"
    content = [{"type": kind, "text": value} for value in texts]
    return line("response_item", {"type": "message", "role": role, "content": content})


def rollout(root: Path, day: str, stamp: str, records: list[Any], *, folder: str = "") -> Path:
    directory = root / (folder or f"sessions/2026/03/{day}")
    return write_jsonl(directory / f"rollout-2026-03-{day}T{stamp}-{SESSION}.jsonl", records)


def read(root: Path, names: dict[str, str] | None = None) -> tuple[list[tuple[str, str, bool]], Any]:
    (files,) = list(codex.walk(root))
    session = codex.read_session(root, files, names)
    items = project_session_conversation(session.snapshot)
    return [(entry.role, entry.text, entry.checkpoint) for entry in items], session


def test_walk_groups_split_files_and_reads_names_without_an_id() -> None:
    groups = {files.native_id: [path.name for path in files.paths] for files in codex.walk(ROOTS["codex"])}
    assert groups == {
        "1b2c3d4e-0000-4a5b-8c9d-000000000001": [
            "rollout-2026-03-04T10-00-00-1b2c3d4e-0000-4a5b-8c9d-000000000001.jsonl"
        ],
        "2c3d4e5f-1111-4b6c-9d0e-000000000002": [
            "rollout-2026-03-05T08-00-00-2c3d4e5f-1111-4b6c-9d0e-000000000002.jsonl",
            "rollout-2026-03-06T09-30-00-2c3d4e5f-1111-4b6c-9d0e-000000000002.jsonl",
        ],
        "3d4e5f60-2222-4c7d-8e1f-000000000003": [
            "rollout-2026-02-20T17-00-00-3d4e5f60-2222-4c7d-8e1f-000000000003.jsonl"
        ],
        "4e5f6071-3333-4d8e-9f20-000000000004": ["rollout-2026-01-10T12-00-00.jsonl"],
    }


def test_a_file_being_archived_is_read_once_from_its_larger_copy(tmp_path: Path) -> None:
    records = [meta(), said("user_message", "hello")]
    rollout(tmp_path, "04", "10-00-00", records)
    archived = rollout(
        tmp_path, "04", "10-00-00", [*records, said("agent_message", "hi")], folder="archived_sessions"
    )
    (files,) = list(codex.walk(tmp_path))
    assert files.paths == (archived,)


def test_files_of_one_session_are_read_in_session_meta_time_order(tmp_path: Path) -> None:
    # The names sort the other way round: the order comes from session_meta, not from the name.
    rollout(tmp_path, "04", "10-00-00", [meta(second=30), said("user_message", "second part")])
    rollout(tmp_path, "05", "09-00-00", [meta(second=10), said("user_message", "first part")])
    items, session = read(tmp_path)
    assert [entry[1] for entry in items] == ["first part", "second part"]
    assert [event["seq"] for event in session.snapshot["events"]] == [2, 4]
    assert session.title == "first part"


def test_turns_come_from_event_messages_and_are_never_counted_twice(tmp_path: Path) -> None:
    rollout(
        tmp_path,
        "04",
        "10-00-00",
        [
            meta(model_provider="azure"),
            item("user", "<environment_context><cwd>/x</cwd></environment_context>"),
            line("turn_context", {"cwd": "/home/ana/api", "model": "gpt-5-codex"}),
            item("user", "question"),
            said("user_message", "question"),
            said("user_message", "<user_instructions>rules</user_instructions>", kind="user_instructions"),
            said("user_message", "<environment_context>x</environment_context>"),
            line("response_item", {"type": "reasoning", "encrypted_content": "zzz"}),
            line(
                "response_item", {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c"}
            ),
            item("assistant", "answer"),
            said("agent_message", "answer"),
            said("agent_reasoning", "thinking"),
        ],
    )
    items, session = read(tmp_path)
    assert items == [("user", "question", False), ("assistant", "answer", False)]
    source = session.snapshot["events"][1]["data"]["message"]["source"]
    assert source == {"kind": "model", "provider": "azure", "model": "gpt-5-codex"}


def test_rollouts_without_event_messages_are_read_from_response_items(tmp_path: Path) -> None:
    rollout(
        tmp_path,
        "04",
        "10-00-00",
        [
            meta(),
            line(
                "response_item",
                {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "sys"}]},
            ),
            item("user", "# AGENTS.md instructions for /x\n\nrules"),
            item("user", "real question", "<environment_context>x</environment_context>"),
            item("assistant", "part a", "part b"),
        ],
    )
    items, session = read(tmp_path)
    assert items == [("user", "real question", False), ("assistant", "part a\npart b", False)]
    assert session.title == "real question"


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ({"message": "summary text"}, [("user", "summary text", True), ("user", "after", False)]),
        (
            {
                "message": "",
                "replacement_history": [
                    item("user", "kept q")["payload"],
                    item("assistant", "kept a")["payload"],
                ],
            },
            [("user", "kept q\n\nkept a", True), ("user", "after", False)],
        ),
        (
            {"message": "  "},
            [("user", "before", False), ("assistant", "reply", False), ("user", "after", False)],
        ),
    ],
)
def test_compaction_replaces_what_it_summarises(
    tmp_path: Path, payload: dict[str, Any], expected: list[Any]
) -> None:
    rollout(
        tmp_path,
        "04",
        "10-00-00",
        [
            meta(),
            said("user_message", "before"),
            said("agent_message", "reply"),
            line("compacted", payload),
            said("user_message", "after"),
        ],
    )
    items, session = read(tmp_path)
    assert items == expected
    if expected[0][2]:
        assert session.snapshot["events"][0]["data"]["source"]["compactionId"] == "line-4"


def test_titles_come_from_the_rename_index_first(tmp_path: Path) -> None:
    rollout(tmp_path, "04", "10-00-00", [meta(), said("user_message", "the first prompt of many words here")])
    _, session = read(tmp_path, {SESSION: "Renamed", "other": "Not this"})
    assert session.title == "Renamed"
    _, session = read(tmp_path, {"other": "Not this"})
    assert session.title == "the first prompt of many words here"
    write_jsonl(tmp_path / "session_index.jsonl", [{"id": SESSION, "thread_name": "From the index"}])
    _, session = read(tmp_path)
    assert session.title == "From the index"


def test_cwd_falls_back_to_the_first_turn_context(tmp_path: Path) -> None:
    first = meta()
    del first["payload"]["cwd"]
    rollout(
        tmp_path,
        "04",
        "10-00-00",
        [first, line("turn_context", {"cwd": "/from/turn"}), said("user_message", "q")],
    )
    _, session = read(tmp_path)
    assert session.cwd == "/from/turn"


def test_default_root_prefers_codex_home(tmp_path: Path) -> None:
    assert codex.default_root({"CODEX_HOME": "/srv/codex"}) == Path("/srv/codex")
    assert codex.default_root({}, home=tmp_path) == tmp_path / ".codex"


def test_a_session_without_files_is_a_coded_error(tmp_path: Path) -> None:
    with pytest.raises(ForeignSourceError) as raised:
        codex.read_session(tmp_path, codex.CodexSessionFiles(SESSION, ()))
    assert raised.value.code is ForeignSourceErrorCode.INVALID_SESSION


def test_walk_skips_rollouts_without_an_id(tmp_path: Path) -> None:
    root = copy_root("codex", tmp_path)
    write_jsonl(root / "archived_sessions" / "rollout-no-meta.jsonl", [said("user_message", "orphan")])
    assert "rollout-no-meta.jsonl" not in {path.name for files in codex.walk(root) for path in files.paths}
