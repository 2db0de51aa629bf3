"""What the line mode prints for log events: streaming by line, references, inert text."""

from __future__ import annotations

from prompt_toolkit.output import DummyOutput
from sessionref_tui.event_view import event_preview, source_label
from sessionref_tui.repl.transcript import Transcript


def chunk(text: str, step: int = 1) -> dict:
    return {
        "type": "assistant/chunk",
        "data": {"turn": 1, "step": step, "chunk": {"type": "text-delta", "text": text}},
    }


def reply(text: str, step: int = 1) -> dict:
    message = {
        "id": "a",
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "source": {"kind": "model", "provider": "p", "model": "m"},
    }
    return {"type": "assistant/message", "data": {"turn": 1, "step": step, "message": message}}


def transcript(columns: int = 80) -> Transcript:
    return Transcript(output=DummyOutput(), style=None, columns=lambda: columns)


def test_a_reply_streams_block_by_block_and_the_line_being_written_is_partial() -> None:
    shown = transcript()
    shown.show_events([chunk("Hel"), chunk("lo\nwor")])
    assert shown.lines == []  # the paragraph is still being written
    assert shown.partial_line == "wor"
    shown.show_events([chunk("ld\n\n- one\n"), chunk("- two")])
    assert shown.lines == ["assistant › Hello", "            world"]  # a line break stays a break
    assert shown.partial_line == "- two"
    shown.show_events([reply("Hello\nworld\n\n- one\n- two")])
    gutter = " " * len("assistant › ")
    assert shown.lines == ["assistant › Hello", f"{gutter}world", "", f"{gutter} • one", f"{gutter} • two"]
    assert shown.partial_line == ""


def test_a_reply_without_chunks_is_printed_whole() -> None:
    shown = transcript()
    shown.show_event(reply("one\ntwo"))
    assert shown.lines == ["assistant › one", "            two"]


def test_a_reply_is_rendered_as_markdown_not_printed_raw() -> None:
    shown = transcript()
    shown.show_event(reply("Use **bold** and `code`\n\n```\nx = 1\n\ny = 2\n```"))
    assert shown.lines[0] == "assistant › Use bold and code"
    assert not any("**" in line or "```" in line for line in shown.lines)
    assert [line.strip() for line in shown.lines[1:] if line.strip()] == ["x = 1", "y = 2"]


def test_a_streamed_code_block_with_a_blank_line_is_printed_in_one_piece() -> None:
    shown = transcript()
    shown.show_events([chunk("```\nx = 1\n\n"), chunk("y = 2\n")])
    assert shown.lines == []  # a blank line inside a fence does not end the block
    shown.show_events([chunk("```\n\nafter")])
    code = [line.removeprefix("assistant › ").strip() for line in shown.lines]
    assert [line for line in code if line] == ["x = 1", "y = 2"]


def test_replies_are_word_wrapped_to_the_terminal_under_their_gutter() -> None:
    shown = transcript(columns=40)
    shown.show_event(reply("alpha beta gamma delta epsilon zeta eta theta iota kappa"))
    assert shown.lines[0].startswith("assistant › alpha")
    assert all(len(line) < 40 for line in shown.lines)
    assert all(line.startswith(" " * len("assistant › ")) for line in shown.lines[1:])
    text = "alpha beta gamma delta epsilon zeta eta theta iota kappa"
    shown_text = " ".join(line.removeprefix("assistant › ").strip() for line in shown.lines)
    assert shown_text == text  # no word was split


def test_messages_are_word_wrapped_with_a_hanging_indent() -> None:
    shown = transcript(columns=30)
    content = [{"type": "text", "text": "a long message that has to wrap somewhere\nsecond"}]
    shown.show_event({"type": "user/message", "data": {"source": {"kind": "user"}, "content": content}})
    assert shown.lines == ["you › a long message that has", "      to wrap somewhere", "      second"]


def test_cancelled_turn_flushes_the_partial_reply() -> None:
    shown = transcript()
    cancelled = {"type": "turn/end", "data": {"turn": 1, "reason": "cancelled"}}
    shown.show_events([chunk("half a thought"), cancelled])
    assert shown.lines == ["assistant › half a thought", "[turn 1 cancelled]"]
    assert shown.partial_line == ""


def test_error_turn_prints_its_code() -> None:
    shown = transcript()
    shown.show_event(
        {
            "type": "turn/end",
            "data": {"turn": 1, "reason": "error", "error": "bad key", "errorCode": "MODEL_AUTH"},
        }
    )
    assert shown.lines == ["✗ MODEL_AUTH: bad key"]


def test_reference_snapshot_is_one_row_with_labels_and_ids() -> None:
    shown = transcript()
    source = {
        "kind": "session-reference",
        "references": [{"sessionId": "s1", "label": "Notes"}, {"sessionId": "s2", "label": "s2"}],
    }
    shown.show_event({"type": "user/message", "data": {"source": source, "content": [], "role": "user"}})
    assert shown.lines == ["⧉ Referenced sessions · Notes (s1), s2"]


def test_hostile_text_and_labels_are_inert() -> None:
    shown = transcript()
    source = {"kind": "session-reference", "references": [{"sessionId": "x\x1b[2J", "label": "\x9bevil"}]}
    shown.show_event({"type": "user/message", "data": {"source": source, "content": [], "role": "user"}})
    content = [{"type": "text", "text": "a\x1b]0;t\x07b"}]
    shown.show_event(
        {"type": "user/message", "data": {"source": {"kind": "user"}, "role": "user", "content": content}}
    )
    shown.show_event(reply("**x** \x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\ \x9b31m"))
    assert all("\x1b" not in line and "\x9b" not in line for line in shown.lines)
    assert shown.lines[-2] == "you › a\\x1b]0;t\\x07b"
    assert shown.lines[-1] == "assistant › x \\x1b]8;;http://evil\\x1b\\link\\x1b]8;;\\x1b\\ \\x9b31m"


def test_log_helpers_name_the_source_and_preview_one_line() -> None:
    event = {
        "type": "user/message",
        "data": {
            "source": {"kind": "plugin", "plugin": "compact"},
            "content": [{"type": "text", "text": "sum\nmary"}],
        },
    }
    assert source_label(event) == "plugin:compact"
    assert event_preview(event) == "checkpoint: sum mary"
    assert source_label(reply("x")) == "model"
    assert event_preview({"type": "step/start", "data": {"turn": 2, "step": 3}}) == "turn 2 step 3"


def test_user_messages_are_told_apart_as_in_the_app() -> None:
    def user(source: dict | None, text: str = "words") -> dict:
        data: dict = {"role": "user", "content": [{"type": "text", "text": text}]}
        if source is not None:
            data["source"] = source
        return {"type": "user/message", "data": data}

    shown = transcript()
    shown.show_events(
        [
            user({"kind": "user"}, "mine"),
            user(None, "also mine"),  # no source at all: the user's own words, as the app shows it
            user({"kind": "plugin", "plugin": "dsh-runtime"}, "injected"),
            user({"kind": "agent-instructions"}, "rules"),
        ]
    )
    assert shown.lines == [
        "you › mine",
        "you › also mine",
        "[context message from dsh-runtime]",
        "[context message from agent-instructions]",
    ]
