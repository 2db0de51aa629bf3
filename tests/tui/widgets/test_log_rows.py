"""The pure log summaries behind the inspector and transcript."""

from __future__ import annotations

import json
from typing import Any

from sessionref_tui.widgets.inspector import MIN_PREVIEW_CELLS, fit_columns
from sessionref_tui.widgets.log_rows import (
    LogRowFolder,
    context_source,
    describe_stats,
    event_preview,
    snapshot_json_pretty,
    snapshot_references,
    snapshot_title,
    source_kind,
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
        assert (last.seq, last.type, last.preview) == ("2–3", "assistant/chunk ×2", "Hel lo")

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


def test_the_preview_column_gets_every_cell_the_other_columns_leave() -> None:
    rows = LogRowFolder().feed([user_event(7, "hello", {"kind": "session-reference"}), chunk_event(8, "hi")])
    widths = fit_columns(rows, 65)
    # "seq", "assistant/chunk ×1", "session-reference"
    assert (widths.seq, widths.type, widths.source) == (3, 18, 17)
    assert widths.preview == 65 - 3 - 18 - 17 - 4  # and one blank cell before each column
    assert fit_columns(rows, 30).preview == MIN_PREVIEW_CELLS
