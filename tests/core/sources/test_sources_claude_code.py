"""Claude Code: which files are sessions, which branch is live, what is projected, which title wins."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from histories import ROOTS, copy_root, write_jsonl
from sessionref.contract.projection import project_session_conversation
from sessionref.sources import claude_code
from sessionref.sources.reader import WalkContext


def user(uuid: str, parent: str | None, content: Any, **extra: Any) -> dict[str, Any]:
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "cwd": "/home/ana/app",
        "type": "user",
        "message": {"role": "user", "content": content},
        "uuid": uuid,
        "timestamp": "2026-03-02T09:00:00.000Z",
        **extra,
    }


def assistant(
    uuid: str, parent: str | None, message_id: str, *blocks: dict[str, Any], **extra: Any
) -> dict[str, Any]:
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "type": "assistant",
        "message": {"id": message_id, "role": "assistant", "model": "claude-x", "content": list(blocks)},
        "uuid": uuid,
        "timestamp": "2026-03-02T09:00:01.000Z",
        **extra,
    }


def text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


def conversation(tmp_path: Path, records: list[Any]) -> list[tuple[str, str, bool]]:
    path = write_jsonl(tmp_path / "projects" / "-home-ana-app" / "s.jsonl", records)
    snapshot = claude_code.read_session(tmp_path, path).snapshot
    return [(item.role, item.text, item.checkpoint) for item in project_session_conversation(snapshot)]


def title_of(tmp_path: Path, records: list[Any]) -> str | None:
    path = write_jsonl(tmp_path / "projects" / "-home-ana-app" / "s.jsonl", records)
    return claude_code.read_session(tmp_path, path).title


def test_walk_lists_session_files_only() -> None:
    names = [path.name for path in claude_code.walk(ROOTS["claude-code"])]
    assert names == [
        "3c8d2e11-9f40-4a7b-b5c6-1e2f3a4b5c03.jsonl",
        "5f1c2a9e-3b7d-4c1e-9a2f-0d8e6b4c1a01.jsonl",
        "7a3e91c0-52d4-4f6b-8e1a-2c9b0d7f3e02.jsonl",
        "b4e5f6a7-0c1d-4e2f-8a3b-4c5d6e7f8a04.jsonl",
    ]


def test_walk_does_not_follow_symlinks_out_of_the_root(tmp_path: Path) -> None:
    root = copy_root("claude-code", tmp_path)
    elsewhere = write_jsonl(tmp_path / "elsewhere" / "9a9a9a9a.jsonl", [user("u", None, "hi")])
    (root / "projects" / "-linked-out").symlink_to(elsewhere.parent)
    (root / "projects" / "-home-ana-blog" / "0000-out.jsonl").symlink_to(elsewhere)
    (root / "projects" / "-home-ana-blog" / "0000-in.jsonl").symlink_to(
        root / "projects" / "-home-ana-shop" / "7a3e91c0-52d4-4f6b-8e1a-2c9b0d7f3e02.jsonl"
    )
    names = {path.name for path in claude_code.walk(root)}
    assert "0000-in.jsonl" in names
    assert "0000-out.jsonl" not in names and "9a9a9a9a.jsonl" not in names
    assert list(claude_code.walk(tmp_path / "missing")) == []


def test_default_root_prefers_the_environment(tmp_path: Path) -> None:
    assert claude_code.default_root({"CLAUDE_CONFIG_DIR": "/cfg/claude"}) == Path("/cfg/claude")
    assert claude_code.default_root({"CLAUDE_CONFIG_DIR": ""}, home=tmp_path) == tmp_path / ".claude"


def test_a_rewound_branch_is_left_out_and_the_newest_leaf_wins(tmp_path: Path) -> None:
    records = [
        user("u1", None, "first"),
        assistant("a1", "u1", "m1", text("answer one")),
        user("u2", "a1", "abandoned question"),
        assistant("a2", "u2", "m2", text("abandoned answer")),
        user("u3", "a1", "second try"),
        assistant("a3", "u3", "m3", text("kept answer")),
        {"parentUuid": "a3", "type": "system", "subtype": "turn_duration", "uuid": "sys1"},
        user("side", None, "subagent prompt", isSidechain=True),
    ]
    assert conversation(tmp_path, records) == [
        ("user", "first", False),
        ("assistant", "answer one", False),
        ("user", "second try", False),
        ("assistant", "kept answer", False),
    ]


def test_a_parent_cycle_or_a_missing_parent_ends_the_chain(tmp_path: Path) -> None:
    records = [
        user("u1", "u3", "one"),
        user("u2", "u1", "two"),
        user("u3", "u2", "three"),
    ]
    assert [entry[1] for entry in conversation(tmp_path, records)] == ["one", "two", "three"]
    records = [user("u1", None, "lost root"), user("u2", "gone", "orphan"), user("u3", "u2", "tip")]
    assert [entry[1] for entry in conversation(tmp_path, records)] == ["orphan", "tip"]


def test_only_the_latest_summarised_compaction_is_a_checkpoint(tmp_path: Path) -> None:
    boundary = {"type": "system", "subtype": "compact_boundary", "parentUuid": None}
    records = [
        user("u1", None, "very old"),
        {**boundary, "uuid": "b1", "logicalParentUuid": "u1"},
        user("s1", "b1", "first summary", isCompactSummary=True),
        user("u2", "s1", "middle"),
        {**boundary, "uuid": "b2", "logicalParentUuid": "u2"},
        user("s2", "b2", "second summary", isCompactSummary=True),
        user("u3", "s2", "latest"),
    ]
    assert conversation(tmp_path, records) == [("user", "second summary", True), ("user", "latest", False)]
    path = tmp_path / "projects" / "-home-ana-app" / "s.jsonl"
    checkpoint = claude_code.read_session(tmp_path, path).snapshot["events"][0]
    assert checkpoint["data"]["source"] == {"kind": "plugin", "plugin": "compact", "compactionId": "b2"}


def test_a_compaction_without_summary_hides_nothing(tmp_path: Path) -> None:
    records = [
        user("u1", None, "before"),
        {
            "type": "system",
            "subtype": "compact_boundary",
            "parentUuid": None,
            "uuid": "b1",
            "logicalParentUuid": "u1",
        },
        user("u2", "b1", "after"),
    ]
    assert [entry[1] for entry in conversation(tmp_path, records)] == ["before", "after"]


def test_one_api_message_written_as_several_lines_is_one_answer(tmp_path: Path) -> None:
    records = [
        user("u1", None, "go"),
        assistant("a1", "u1", "m1", {"type": "thinking", "thinking": "hidden"}),
        assistant("a2", "a1", "m1", text("part one")),
        assistant("a3", "a2", "m1", {"type": "tool_use", "id": "t1", "name": "Read", "input": {}}),
        user("r1", "a3", [{"type": "tool_result", "tool_use_id": "t1", "content": "file body"}]),
        assistant("a4", "r1", "m1", text("part two")),
        assistant("a5", "a4", "m2", text("next message")),
    ]
    assert conversation(tmp_path, records) == [
        ("user", "go", False),
        ("assistant", "part one\npart two", False),
        ("assistant", "next message", False),
    ]
    path = tmp_path / "projects" / "-home-ana-app" / "s.jsonl"
    events = claude_code.read_session(tmp_path, path).snapshot["events"]
    assert [event["seq"] for event in events] == [1, 6, 7]
    assert events[1]["data"]["message"]["source"] == {
        "kind": "model",
        "provider": "anthropic",
        "model": "claude-x",
    }


@pytest.mark.parametrize(
    "content",
    [
        "<command-name>/clear</command-name>",
        "  <local-command-stdout>ok</local-command-stdout>",
        [text("<system-reminder>be brief</system-reminder>")],
        [text("[Request interrupted by user for tool use]")],
        [{"type": "tool_result", "tool_use_id": "t", "content": "out"}],
        [{"type": "image", "source": {"type": "base64", "data": "AAAA"}}],
    ],
)
def test_tool_and_ui_plumbing_is_not_a_prompt(tmp_path: Path, content: Any) -> None:
    records = [user("u1", None, content), user("u2", "u1", "the real prompt")]
    assert conversation(tmp_path, records) == [("user", "the real prompt", False)]
    assert title_of(tmp_path, records) == "the real prompt"


def test_meta_lines_are_not_prompts(tmp_path: Path) -> None:
    records = [user("u1", None, "caveat text", isMeta=True), user("u2", "u1", [text("kept"), text("both")])]
    assert conversation(tmp_path, records) == [("user", "kept\nboth", False)]


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ([], "first prompt words here now and more"),
        ([{"type": "summary", "summary": "Old"}, {"type": "summary", "summary": "Newer"}], "Newer"),
        ([{"type": "ai-title", "aiTitle": "AI"}, {"type": "summary", "summary": "Summary"}], "AI"),
        ([{"type": "custom-title", "customTitle": "Mine"}, {"type": "ai-title", "aiTitle": "AI"}], "Mine"),
        ([{"type": "custom-title", "customTitle": "A"}, {"type": "custom-title", "customTitle": "B"}], "B"),
        (
            [
                {"type": "custom-title", "customTitle": "A"},
                {"type": "custom-title", "customTitle": " \x1b[0m "},
            ],
            "A",
        ),
    ],
)
def test_title_ranks(tmp_path: Path, extra: list[dict[str, Any]], expected: str) -> None:
    records = [user("u1", None, "first prompt words here now and more"), *extra]
    assert title_of(tmp_path, records) == expected


def test_without_timestamps_the_times_are_the_file_mtime(tmp_path: Path) -> None:
    record = user("u1", None, "no time")
    del record["timestamp"]
    path = write_jsonl(tmp_path / "projects" / "p" / "s.jsonl", [record])
    os.utime(path, ns=(1_700_000_000_123_456_789, 1_700_000_000_123_456_789))
    session = claude_code.read_session(tmp_path, path)
    assert (session.created_at, session.updated_at) == (1_700_000_000_123, 1_700_000_000_123)
    assert session.snapshot["session"] == {
        "type": "session",
        "version": 0,
        "id": "claude-code:s",
        "createdAt": 1_700_000_000_123,
        "cwd": "/home/ana/app",
        "delegationDepth": 0,
    }


def test_a_session_without_messages_has_an_empty_snapshot(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "projects" / "p" / "s.jsonl", [{"type": "summary", "summary": "x"}])
    session = claude_code.read_session(tmp_path, path)
    assert session.snapshot["events"] == [] and session.snapshot["capturedThroughSeq"] is None
    assert session.cwd is None and "cwd" not in session.snapshot["session"]


def _scan_title(tmp_path: Path, records: list[Any]) -> str | None:
    path = write_jsonl(tmp_path / "projects" / "-home-ana-app" / "scanned.jsonl", records)
    return claude_code.scan_session_file(tmp_path, path).title


@pytest.mark.parametrize(
    ("records", "expected"),
    [
        # the leaf is a line of this file, written before or after the summary: the summary titles it
        (
            [
                user("u1", None, "first prompt"),
                {"type": "summary", "summary": "Cart work", "leafUuid": "u1"},
            ],
            "Cart work",
        ),
        (
            [
                {"type": "summary", "summary": "Cart work", "leafUuid": "u1"},
                user("u1", None, "first prompt"),
            ],
            "Cart work",
        ),
        # the leaf is not in the file: that summary names the conversation this one was resumed from
        (
            [
                {"type": "summary", "summary": "Someone else's", "leafUuid": "elsewhere"},
                user("u1", None, "first prompt"),
            ],
            "first prompt",
        ),
        (
            [
                {"type": "summary", "summary": "Mine", "leafUuid": "u1"},
                {"type": "summary", "summary": "Someone else's", "leafUuid": "elsewhere"},
                user("u1", None, "first prompt"),
            ],
            "Mine",
        ),
    ],
)
def test_a_summary_titles_the_session_only_when_its_leaf_is_in_the_file(
    tmp_path: Path, records: list[Any], expected: str
) -> None:
    assert title_of(tmp_path, records) == expected
    assert _scan_title(tmp_path, records) == expected


def test_a_summary_whose_leaf_is_appended_later_becomes_the_title(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "projects" / "p" / "s.jsonl",
        [user("u1", None, "first prompt"), {"type": "summary", "summary": "Later leaf", "leafUuid": "a9"}],
    )
    first = claude_code.scan_session_file(tmp_path, path)
    assert first.title == "first prompt"
    with path.open("a") as handle:
        handle.write(json.dumps(assistant("a9", "u1", "m1", text("done"))) + "\n")
    grown = claude_code.scan_session_file(tmp_path, path, first)
    assert grown.offset > first.offset and grown.title == "Later leaf"


@pytest.mark.parametrize(
    "records",
    [
        [],
        [{"type": "summary", "summary": "Only a summary", "leafUuid": "x"}],
        [{"type": "file-history-snapshot"}],
    ],
)
def test_an_empty_or_summary_only_file_is_not_a_session(tmp_path: Path, records: list[Any]) -> None:
    path = write_jsonl(tmp_path / "projects" / "p" / "s.jsonl", records)
    reader = claude_code.READER
    scan = reader.scan(tmp_path, path, None)
    assert reader.summarize(tmp_path, None, (scan,), WalkContext()) is None
    with path.open("a") as handle:
        handle.write(json.dumps(user("u1", None, "now a prompt")) + "\n")
    grown = reader.scan(tmp_path, path, scan)
    summary = reader.summarize(tmp_path, None, (grown,), WalkContext())
    assert summary is not None and summary.title == "now a prompt"
