"""What the line mode prints for log events: streaming by line, references, inert text."""

from __future__ import annotations

from prompt_toolkit.output import DummyOutput
from sessionref_tui.repl.transcript import Transcript, event_preview, event_source_kind


def chunk(text: str, step: int = 1) -> dict:
    return {"type": "assistant/chunk", "data": {"turn": 1, "step": step, "chunk": {"type": "text-delta",
                                                                                    "text": text}}}


def reply(text: str, step: int = 1) -> dict:
    message = {"id": "a", "role": "assistant", "content": [{"type": "text", "text": text}],
               "source": {"kind": "model", "provider": "p", "model": "m"}}
    return {"type": "assistant/message", "data": {"turn": 1, "step": step, "message": message}}


def transcript() -> Transcript:
    return Transcript(output=DummyOutput(), style=None)


def test_chunks_print_each_completed_line_and_keep_the_tail_partial() -> None:
    shown = transcript()
    shown.show_events([chunk("Hel"), chunk("lo\nwor")])
    assert shown.lines == ["assistant › Hello"]
    assert shown.partial_line == "wor"
    shown.show_events([chunk("ld"), reply("Hello\nworld")])
    assert shown.lines == ["assistant › Hello", "            world"]
    assert shown.partial_line == ""


def test_a_reply_without_chunks_is_printed_whole() -> None:
    shown = transcript()
    shown.show_event(reply("one\ntwo"))
    assert shown.lines == ["assistant › one", "            two"]


def test_cancelled_turn_flushes_the_partial_reply() -> None:
    shown = transcript()
    cancelled = {"type": "turn/end", "data": {"turn": 1, "reason": "cancelled"}}
    shown.show_events([chunk("half a thought"), cancelled])
    assert shown.lines == ["assistant › half a thought", "[turn 1 cancelled]"]


def test_error_turn_prints_its_code() -> None:
    shown = transcript()
    shown.show_event({"type": "turn/end", "data": {"turn": 1, "reason": "error", "error": "bad key",
                                                   "errorCode": "MODEL_AUTH"}})
    assert shown.lines == ["✗ MODEL_AUTH: bad key"]


def test_reference_snapshot_is_one_row_with_labels_and_ids() -> None:
    shown = transcript()
    source = {"kind": "session-reference", "references": [{"sessionId": "s1", "label": "Notes"},
                                                          {"sessionId": "s2", "label": "s2"}]}
    shown.show_event({"type": "user/message", "data": {"source": source, "content": [], "role": "user"}})
    assert shown.lines == ["⧉ Referenced sessions · Notes (s1), s2"]


def test_hostile_text_and_labels_are_inert() -> None:
    shown = transcript()
    source = {"kind": "session-reference", "references": [{"sessionId": "x\x1b[2J", "label": "\x9bevil"}]}
    shown.show_event({"type": "user/message", "data": {"source": source, "content": [], "role": "user"}})
    content = [{"type": "text", "text": "a\x1b]0;t\x07b"}]
    shown.show_event({"type": "user/message", "data": {"source": {"kind": "user"}, "role": "user",
                                                       "content": content}})
    assert all("\x1b" not in line and "\x9b" not in line for line in shown.lines)
    assert shown.lines[-1] == "you › a\\x1b]0;t\\x07b"


def test_log_helpers_name_the_source_and_preview_one_line() -> None:
    event = {"type": "user/message", "data": {"source": {"kind": "plugin", "plugin": "compact"},
                                              "content": [{"type": "text", "text": "sum\nmary"}]}}
    assert event_source_kind(event) == "plugin:compact"
    assert event_preview(event) == "sum mary"
    assert event_source_kind(reply("x")) == "model"
    assert event_preview({"type": "step/start", "data": {"turn": 2, "step": 3}}) == "turn=2 step=3"
