"""The pure event view behind both UIs: message text, kinds, previews, log rows, snapshots."""

from __future__ import annotations

import json
from typing import Any

from sessionref.contract.context_message import render_prompt
from sessionref_tui.event_view import (
    PREVIEW_CHARS,
    SNAPSHOT_CLOSE_TAG,
    SNAPSHOT_OPEN_TAG,
    LogRowFolder,
    context_source,
    describe_stats,
    event_preview,
    log_rows,
    message_text,
    skipped_lines_notice,
    snapshot_json_pretty,
    snapshot_references,
    snapshot_title,
    source_kind,
    source_label,
    user_message_kind,
)


def user_event(seq: int, text: str, source: dict[str, Any] | None = None) -> dict[str, Any]:
    message = {
        "source": source or {"kind": "user"},
        "content": [{"type": "text", "text": text}],
        "role": "user",
    }
    return {"seq": seq, "type": "user/message", "data": message, "surfaceOp": "append"}


def chunk_event(seq: int, text: str, turn: int = 1, step: int = 1) -> dict[str, Any]:
    return {
        "seq": seq,
        "type": "assistant/chunk",
        "data": {"turn": turn, "step": step, "chunk": {"text": text}},
    }


SNAPSHOT_SOURCE = {
    "kind": "session-reference",
    "version": 1,
    "references": [
        {
            "sessionId": "s-1",
            "label": "Retry test",
            "capturedThroughSeq": 12,
            "compacted": False,
            "originalMessages": 6,
            "retainedMessages": 4,
            "omittedMessages": 2,
            "omittedBytes": 1234,
            "truncated": True,
            "inputIndex": 0,
        },
        {"sessionId": "s-2", "label": "Index"},
    ],
}


class TestSourceKind:
    def test_user_message_source(self) -> None:
        assert source_kind(user_event(1, "hi")) == "user"

    def test_assistant_message_source_is_inside_the_message(self) -> None:
        event = {"type": "assistant/message", "data": {"message": {"source": {"kind": "model"}}}}
        assert source_kind(event) == "model"

    def test_event_without_source(self) -> None:
        assert source_kind({"type": "turn/start", "data": {"turn": 1}}) == ""


class TestSnapshot:
    def test_title_lists_labels_in_order(self) -> None:
        message = user_event(1, "x", SNAPSHOT_SOURCE)["data"]
        assert snapshot_title(message) == "Referenced sessions · Retry test, Index"

    def test_stats_line_has_numbers(self) -> None:
        first = snapshot_references(user_event(1, "x", SNAPSHOT_SOURCE)["data"])[0]
        assert describe_stats(first) == (
            "kept 4 of 6 messages, omitted 2 (1,234 bytes), truncated, through seq 12"
        )

    def test_pretty_json_restores_escaped_angle_brackets(self) -> None:
        payload = json.dumps({"sessions": [{"text": "a <b> c"}]}).replace("<", "\\u003c")
        text = f"## Referenced sessions\nwarning\n<referenced-sessions>{payload}</referenced-sessions>"
        pretty = snapshot_json_pretty(user_event(1, text, SNAPSHOT_SOURCE)["data"])
        assert json.loads(pretty) == {"sessions": [{"text": "a <b> c"}]}
        assert "\n  " in pretty

    def test_invalid_json_is_shown_raw(self) -> None:
        text = "<referenced-sessions>{not json</referenced-sessions>"
        assert snapshot_json_pretty(user_event(1, text, SNAPSHOT_SOURCE)["data"]) == "{not json"


class TestPreview:
    def test_user_message_is_one_line(self) -> None:
        assert event_preview(user_event(1, "line one\n\nline   two")) == "line one line two"

    def test_turn_error_mentions_the_error(self) -> None:
        event = {"type": "turn/end", "data": {"turn": 2, "reason": "error", "error": "MODEL_AUTH: bad key"}}
        assert event_preview(event) == "turn 2 · error · MODEL_AUTH: bad key"

    def test_checkpoint(self) -> None:
        source = {"kind": "plugin", "plugin": "compact", "compactionId": "c"}
        assert event_preview(user_event(3, "summary", source)) == "checkpoint: summary"


class TestFolder:
    def test_chunk_runs_fold_into_one_row_per_step(self) -> None:
        folder = LogRowFolder()
        rows = folder.feed([user_event(1, "hi"), chunk_event(2, "Hel"), chunk_event(3, "lo")])
        assert [row.key for row in rows] == ["seq-1", "chunks-2", "chunks-2"]
        last = rows[-1]
        assert (last.seq, last.type, last.preview) == ("2–3", "assistant/chunk ×2", "Hello")

    def test_run_continues_across_feeds_and_ends_at_other_events(self) -> None:
        folder = LogRowFolder()
        folder.feed([chunk_event(5, "a")])
        again = folder.feed([chunk_event(6, "b"), user_event(7, "steer"), chunk_event(8, "c", step=2)])
        assert [row.key for row in again] == ["chunks-5", "seq-7", "chunks-8"]

    def test_new_step_starts_a_new_row(self) -> None:
        rows = LogRowFolder().feed([chunk_event(1, "a"), chunk_event(2, "b", step=2)])
        assert [row.key for row in rows] == ["chunks-1", "chunks-2"]


def test_context_names_who_injected_it_and_nothing_else_is_context() -> None:
    def source_of(source: dict[str, Any] | None) -> str | None:
        return context_source(user_event(1, "x", source)["data"])

    assert source_of({"kind": "plugin", "plugin": "@deepseek-ai/dsh-system-prompt"}) == (
        "@deepseek-ai/dsh-system-prompt"
    )
    assert source_of({"kind": "agent-instructions", "form": "instructions"}) == "agent-instructions"
    assert source_of({"kind": "plugin"}) == "plugin"
    assert source_of({"kind": "user"}) is None
    assert source_of({"kind": "session-reference", "references": []}) is None
    assert source_of({"kind": "plugin", "plugin": "compact"}) is None
    assert context_source({"content": "no source at all"}) is None


def test_message_text_is_the_contracts_join_and_a_plain_string_is_kept() -> None:
    blocks = [{"type": "text", "text": "one"}, {"type": "image"}, {"type": "text", "text": "two"}]
    two_blocks = {"content": blocks}
    assert message_text(two_blocks) == "one\ntwo"  # as the model receives it in a reference
    assert message_text({"content": "written as a string"}) == "written as a string"
    assert message_text({"content": None}) == ""


def test_what_a_user_message_is() -> None:
    def kind_of(source: dict[str, Any] | None) -> str:
        return user_message_kind(user_event(1, "x", source)["data"])

    assert kind_of({"kind": "user"}) == "prompt"
    assert user_message_kind({"content": [], "role": "user"}) == "prompt"  # no source: the user's own words
    assert kind_of({"kind": "session-reference", "references": []}) == "snapshot"
    assert kind_of({"kind": "plugin", "plugin": "compact"}) == "checkpoint"
    assert kind_of({"kind": "plugin", "plugin": "dsh-runtime"}) == "context"
    assert kind_of({"kind": "agent-instructions"}) == "context"


def test_a_named_plugin_is_its_own_source_label() -> None:
    checkpoint = user_event(3, "summary", {"kind": "plugin", "plugin": "compact"})
    assert (source_kind(checkpoint), source_label(checkpoint)) == ("plugin", "plugin:compact")
    assert source_label(user_event(4, "x", {"kind": "plugin"})) == "plugin"
    assert source_label(user_event(5, "x")) == "user"


def test_every_event_type_has_a_one_line_preview() -> None:
    assert event_preview({"type": "step/start", "data": {"turn": 2, "step": 3}}) == "turn 2 step 3"
    assert event_preview({"type": "turn/start", "data": {"turn": 2}}) == "turn 2"
    assert event_preview({"type": "session/title", "data": {"title": "A\ntitle"}}) == "A title"
    tool_result = {"type": "tool/result", "data": {"toolCallId": "t", "content": []}}
    assert event_preview(tool_result) == "content, toolCallId"
    assert event_preview(user_event(1, "x" * 1000)) == "x" * (PREVIEW_CHARS - 1) + "…"
    assert event_preview(user_event(1, "abcdef"), limit=4) == "abc…"


def test_the_snapshot_tags_are_the_contracts() -> None:
    assert (SNAPSHOT_OPEN_TAG, SNAPSHOT_CLOSE_TAG) == ("<referenced-sessions>", "</referenced-sessions>")
    prompt = render_prompt([])  # the frame the contract writes, around an empty list of previews
    assert json.loads(snapshot_json_pretty(user_event(1, prompt, SNAPSHOT_SOURCE)["data"])) == []


def test_log_rows_fold_each_chunk_run_into_its_final_row() -> None:
    events = [
        {"seq": 0, "type": "step/start", "data": {"turn": 1, "step": 1}},
        chunk_event(1, "Hel"),
        chunk_event(2, "lo "),
        chunk_event(3, "you"),
        {"seq": 4, "type": "step/end", "data": {"turn": 1, "step": 1}},
    ]
    assert [(row.seq, row.type, row.preview) for row in log_rows(events)] == [
        ("0", "step/start", "turn 1 step 1"),
        ("1–3", "assistant/chunk ×3", "Hello you"),
        ("4", "step/end", "turn 1 step 1"),
    ]


def test_a_long_chunk_run_keeps_a_bounded_preview() -> None:
    folder = LogRowFolder(limit=10)
    rows = folder.feed([chunk_event(seq, "word ") for seq in range(1, 1000)])
    assert rows[-1].preview == "word word…"
    assert rows[-1].type == "assistant/chunk ×999"
    assert len(folder._run_text) < 20  # it stopped keeping text once the preview was full


def test_skipped_lines_are_counted_and_named() -> None:
    assert skipped_lines_notice([]) is None
    assert skipped_lines_notice([3]) == "1 unreadable line in this log was skipped (line 3)"
    assert skipped_lines_notice([3, 7]) == "2 unreadable lines in this log were skipped (lines 3, 7)"
    assert skipped_lines_notice(list(range(1, 1201))) == (
        "1,200 unreadable lines in this log were skipped (lines 1, 2, 3, 4, 5, …)"
    )
