"""Gemini CLI: replaying the chat recording (rewrites, rewinds, history replacement), titles, legacy files."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from histories import ROOTS, write_jsonl
from sessionref.contract.projection import project_session_conversation
from sessionref.sources import ForeignSourceError, ForeignSourceErrorCode, gemini
from sessionref.sources.reader import WalkContext

METADATA = {"sessionId": "g-1", "projectHash": "h", "startTime": "2026-03-07T11:00:00.000Z"}


def message(message_id: str, kind: str, content: Any, second: int = 1) -> dict[str, Any]:
    return {
        "id": message_id,
        "timestamp": f"2026-03-07T11:00:{second:02d}.000Z",
        "type": kind,
        "content": content,
    }


def session_file(root: Path, records: list[Any], name: str = "session-2026-03-07T11-00-g1.jsonl") -> Path:
    return write_jsonl(root / "tmp" / "proj" / "chats" / name, records)


def read(root: Path, records: list[Any]) -> tuple[list[tuple[str, str, bool]], Any]:
    path = session_file(root, records)
    session = gemini.read_session(root, path)
    assert gemini.scan_session_file(root, path).summary(gemini.project_cwd(root, path)) == session.summary
    items = project_session_conversation(session.snapshot)
    return [(entry.role, entry.text, entry.checkpoint) for entry in items], session


def test_walk_skips_subagent_chats_and_old_copies() -> None:
    names = [path.name for path in gemini.walk(ROOTS["gemini"])]
    assert names == [
        "session-2025-10-01T10-00-6f7a8b9c.jsonl",
        "session-2025-11-02T16-40-1a2b3c4d.json",
        "session-2026-03-07T11-00-9d8c7b6a.jsonl",
        "session-2026-03-08T09-15-5e4d3c2b.jsonl",
    ]


def test_default_root_follows_gemini_cli_home(tmp_path: Path) -> None:
    assert gemini.default_root({"GEMINI_CLI_HOME": "/profiles/work"}) == Path("/profiles/work/.gemini")
    assert gemini.default_root({}, home=tmp_path) == tmp_path / ".gemini"


def test_rewrites_replace_in_place_and_rewinds_truncate(tmp_path: Path) -> None:
    items, session = read(
        tmp_path,
        [
            METADATA,
            message("m1", "user", "one"),
            message("m2", "gemini", "draft"),
            message("m3", "info", "approval changed"),
            message("m2", "gemini", [{"text": "thinking", "thought": True}, {"text": "fin"}, {"text": "al"}]),
            message("m4", "user", "two"),
            message("m5", "gemini", "reply two"),
            {"$rewindTo": "m4"},
            {"$rewindTo": "unknown-id"},
            message("m6", "user", "three"),
            message("m7", "error", "quota"),
        ],
    )
    assert items == [("user", "one", False), ("assistant", "final", False), ("user", "three", False)]
    # One counter through the file: m1 1, m2 2, m3 3, m2 again 4, m4 5, m5 6, m6 7, m7 8.
    assert [event["seq"] for event in session.snapshot["events"]] == [1, 4, 7]
    assert session.snapshot["capturedThroughSeq"] == 7


def test_a_replaced_history_gives_every_item_its_own_seq(tmp_path: Path) -> None:
    """Seqs stay unique and growing, so the conversation index can key messages by them."""
    replaced = [
        {"id": "r1", "type": "user", "content": "summary of before"},
        {"id": "r2", "type": "gemini", "content": "kept answer"},
        {"id": "r3", "type": "user", "content": "kept question"},
    ]
    _items, session = read(
        tmp_path,
        [
            METADATA,
            message("m1", "user", "one"),
            {"$set": {"messages": replaced}},
            message("m2", "user", "two"),
        ],
    )
    seqs = [event["seq"] for event in session.snapshot["events"]]
    assert seqs == [2, 3, 4, 5]
    assert session.snapshot["capturedThroughSeq"] == 5


def test_rewinding_to_an_info_record_drops_what_follows(tmp_path: Path) -> None:
    records = [
        METADATA,
        message("m1", "user", "one"),
        message("i1", "info", "x"),
        message("m2", "user", "two"),
    ]
    items, _ = read(tmp_path, [*records, {"$rewindTo": "i1"}])
    assert items == [("user", "one", False)]


@pytest.mark.parametrize(
    ("updates", "title"),
    [
        ([], "first question"),
        ([{"$set": {"summary": "Summed up"}}], "Summed up"),
        ([{"$rewindTo": "m1"}, message("m9", "user", "replacement question")], "replacement question"),
        ([message("m1", "user", "edited question")], "edited question"),
        ([message("m1", "gemini", "now an answer"), message("m9", "user", "next one")], "first question"),
        ([{"$rewindTo": "i0"}, message("m9", "user", "after info rewind")], "after info rewind"),
        ([message("i0", "user", "info became user")], "info became user"),
        (
            [{"$set": {"messages": [message("c1", "user", "snapshot"), message("c2", "user", "kept")]}}],
            "first question",
        ),
    ],
)
def test_the_title_is_the_summary_else_the_first_user_message(
    tmp_path: Path, updates: list[Any], title: str
) -> None:
    records = [
        METADATA,
        message("i0", "info", "hello"),
        message("m1", "user", "first question"),
        message("m2", "user", "second"),
    ]
    _, session = read(tmp_path, [*records, *updates])
    assert session.title == title


def test_a_replaced_history_is_a_compaction(tmp_path: Path) -> None:
    replacement = [
        message("n0", "info", "compressed"),
        message("c1", "user", [{"text": "<state_snapshot>goal</state_snapshot>"}]),
        message("c2", "gemini", "Got it."),
        message("m2", "gemini", "kept answer"),
    ]
    items, session = read(
        tmp_path,
        [
            METADATA,
            message("m1", "user", "old question"),
            message("m2", "gemini", "kept answer"),
            {"$set": {"messages": replacement, "lastUpdated": "2026-03-07T11:30:00.000Z"}},
            message("m3", "user", "new question"),
            {"$rewindTo": "m3"},
            message("m4", "user", "newer question"),
        ],
    )
    assert items == [
        ("user", "<state_snapshot>goal</state_snapshot>", True),
        ("assistant", "Got it.", False),
        ("assistant", "kept answer", False),
        ("user", "newer question", False),
    ]
    assert session.snapshot["events"][0]["data"]["source"]["compactionId"] == "line-4"
    assert session.title == "old question"


def test_without_a_known_first_prompt_a_replacement_supplies_it(tmp_path: Path) -> None:
    replacement = [message("c1", "user", "summary"), message("c2", "user", "a prompt kept")]
    _, session = read(tmp_path, [METADATA, {"$set": {"messages": replacement}}])
    assert session.title == "a prompt kept"


def test_exotic_message_ids_still_scan_like_the_full_read(tmp_path: Path) -> None:
    odd = 'é\u2028"id'
    _, session = read(
        tmp_path, [METADATA, message(odd, "user", "first"), message(odd, "user", "edited first")]
    )
    assert session.title == "edited first"


def test_a_file_without_metadata_has_no_session(tmp_path: Path) -> None:
    path = session_file(tmp_path, [message("m1", "user", "no metadata")])
    with pytest.raises(ForeignSourceError) as raised:
        gemini.read_session(tmp_path, path)
    assert raised.value.code is ForeignSourceErrorCode.INVALID_SESSION
    with pytest.raises(ForeignSourceError):
        gemini.scan_session_file(tmp_path, path).summary(None)


def test_legacy_json_sessions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    legacy = tmp_path / "tmp" / "proj" / "chats" / "session-2025-10-01T10-00-abcd.json"
    legacy.parent.mkdir(parents=True)
    legacy.write_text(
        '\ufeff{"sessionId": "old", "startTime": "2025-10-01T10:00:00Z", "messages": [{"id": "a", '
        '"type": "user", "content": "legacy prompt"}, 3]}',
        encoding="utf-8",
    )
    session = gemini.read_session(tmp_path, legacy)
    assert (session.session_id, session.title, session.lines_read, session.skipped_lines) == (
        "gemini:old",
        "legacy prompt",
        1,
        0,
    )
    previous = gemini.scan_session_file(tmp_path, legacy)
    assert gemini.scan_session_file(tmp_path, legacy, previous) is previous
    legacy.write_text("{not json", encoding="utf-8")
    with pytest.raises(ForeignSourceError) as raised:
        gemini.read_session(tmp_path, legacy)
    assert raised.value.code is ForeignSourceErrorCode.INVALID_SESSION
    monkeypatch.setattr(gemini, "LEGACY_MAX_BYTES", 4)
    with pytest.raises(ForeignSourceError) as raised:
        gemini.scan_session_file(tmp_path, legacy)
    assert raised.value.code is ForeignSourceErrorCode.TOO_LARGE


def test_cwd_comes_from_the_project_root_file_inside_the_source(tmp_path: Path) -> None:
    path = session_file(tmp_path, [METADATA, message("m1", "user", "q")])
    assert gemini.project_cwd(tmp_path, path) is None
    marker = tmp_path / "tmp" / "proj" / ".project_root"
    marker.write_text("/home/ana/shop\n", encoding="utf-8")
    assert gemini.project_cwd(tmp_path, path) == "/home/ana/shop"
    marker.unlink()
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.write_text("/etc\n", encoding="utf-8")
    marker.symlink_to(outside)
    assert gemini.project_cwd(tmp_path, path) is None


def _discovered(root: Path, path: Path, known: frozenset[str] = frozenset()) -> Any:
    reader = gemini.READER
    scan = reader.scan(root, path, None)
    return reader.summarize(root, None, (scan,), WalkContext(known_cwds=known))


def test_a_hashed_project_folder_is_matched_to_a_known_folder(tmp_path: Path) -> None:
    """Older Gemini CLI names the project folder by the SHA-256 of its root and writes no `.project_root`."""
    shop = "/home/ana/shop"
    digest = hashlib.sha256(shop.encode()).hexdigest()
    metadata = {**METADATA, "projectHash": digest}
    path = write_jsonl(
        tmp_path / "tmp" / digest / "chats" / "session-x.jsonl", [metadata, message("m", "user", "hi")]
    )
    assert _discovered(tmp_path, path, frozenset({"/home/ana/blog", shop})).cwd == shop
    assert _discovered(tmp_path, path, frozenset({"/home/ana/blog"})).cwd is None
    renamed = write_jsonl(  # the hash only in the folder's name
        tmp_path / "tmp" / digest.upper() / "chats" / "session-y.jsonl",
        [{**METADATA, "projectHash": None}, message("m", "user", "hi")],
    )
    assert _discovered(tmp_path, renamed, frozenset({shop})).cwd == shop


def test_the_project_root_file_wins_then_the_first_directory(tmp_path: Path) -> None:
    metadata = {**METADATA, "directories": ["/home/ana/api", "/home/ana/lib"]}
    path = session_file(tmp_path, [metadata, message("m", "user", "hi")])
    assert _discovered(tmp_path, path).cwd == "/home/ana/api"
    assert gemini.read_session(tmp_path, path).cwd == "/home/ana/api"
    (tmp_path / "tmp" / "proj" / ".project_root").write_text("/home/ana/real\n")
    assert _discovered(tmp_path, path).cwd == "/home/ana/real"


def test_a_subagent_chat_is_not_a_session(tmp_path: Path) -> None:
    path = session_file(tmp_path, [{**METADATA, "kind": "subagent"}, message("m", "user", "task")])
    assert _discovered(tmp_path, path) is None
    main = session_file(
        tmp_path, [{**METADATA, "kind": "main"}, message("m", "user", "hi")], "session-main.jsonl"
    )
    assert _discovered(tmp_path, main) is not None
