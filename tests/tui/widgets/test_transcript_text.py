"""Transcript text helpers: chips in prompts, Markdown made safe, finished chunks folded away."""

from __future__ import annotations

from sessionref_tui.widgets.transcript import (
    CHIP_STYLE,
    _collapse_finished_chunks,
    chip_content,
    markdown_safe,
)


def test_known_labels_become_chips_longest_first() -> None:
    content = chip_content("see @Plan B and @Plan", {"Plan", "Plan B"})
    assert content.plain == "see @Plan B and @Plan"
    chips = [content.plain[span.start : span.end] for span in content.spans if span.style == CHIP_STYLE]
    assert chips == ["@Plan B", "@Plan"]


def test_unknown_mentions_and_emails_stay_plain() -> None:
    content = chip_content("mail me@Plan or @Other", {"Plan"})
    assert content.plain == "mail me@Plan or @Other"
    assert content.spans == []


def test_markdown_safe_keeps_lines_and_escapes_controls() -> None:
    assert markdown_safe("a\x1b[31m\nb\x07") == "a\\x1b[31m\nb\\x07"


def test_chunks_of_finished_steps_are_dropped_but_running_ones_kept() -> None:
    events = [
        {"type": "assistant/chunk", "data": {"turn": 1, "step": 1, "chunk": {"text": "a"}}},
        {"type": "assistant/message", "data": {"turn": 1, "step": 1, "message": {}}},
        {"type": "assistant/chunk", "data": {"turn": 2, "step": 1, "chunk": {"text": "b"}}},
    ]
    assert [event["type"] for event in _collapse_finished_chunks(events)] == [
        "assistant/message",
        "assistant/chunk",
    ]
