"""Antigravity CLI: transcripts, the user-request wrappers, what is projected."""

from __future__ import annotations

from pathlib import Path

import pytest
from histories import discover, projected, read_listed, write_jsonl
from sessionref.sources.antigravity import READER, prompt_text

CHECKOUT = "antigravity:0c1d2e3f-0000-4000-8000-0000000000a1"
CHANGELOG = "antigravity:1d2e3f40-0000-4000-8000-0000000000a2"


def test_a_conversation_folder_with_a_prompt_is_a_session() -> None:
    listed = {summary.session_id: summary for summary in discover("antigravity")}
    assert set(listed) == {CHECKOUT, CHANGELOG}  # the third has only a system record
    assert listed[CHECKOUT].cwd == "/home/ana/shop" and listed[CHANGELOG].cwd is None
    assert listed[CHECKOUT].title == "Speed up the checkout tests"
    assert listed[CHECKOUT].updated_at > listed[CHECKOUT].created_at


def test_prompts_lose_their_wrappers_and_tools_are_left_out() -> None:
    (checkout,) = [summary for summary in discover("antigravity") if summary.session_id == CHECKOUT]
    session = read_listed(checkout)
    assert projected(session) == [
        ("user", "Speed up the checkout tests", False),
        ("assistant", "I'll parallelise the slow fixtures.", False),
        ("user", "Now drop the sleep in test_pay", False),
        ("assistant", "Removed the sleep; the test waits on the event now.", False),
    ]
    assert session.skipped_lines == 1


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("<USER_REQUEST>fix it</USER_REQUEST>", "fix it"),
        (
            '<USER_REQUEST>fix it<ADDITIONAL_METADATA>{"cwd":"/a"}</ADDITIONAL_METADATA></USER_REQUEST>',
            "fix it",
        ),
        (
            '<USER_REQUEST>fix it</USER_REQUEST>\n<ADDITIONAL_METADATA>{"cwd":"/a"}</ADDITIONAL_METADATA>',
            "fix it",
        ),
        ("<USER_SETTINGS_CHANGE>x</USER_SETTINGS_CHANGE>plain words", "plain words"),
        ("<USER_SETTINGS_CHANGE>only settings</USER_SETTINGS_CHANGE>", ""),
    ],
)
def test_the_request_is_what_the_person_typed(content: str, expected: str) -> None:
    assert prompt_text(content) == expected


def test_the_full_transcript_is_read_only_when_there_is_no_short_one(tmp_path: Path) -> None:
    logs = tmp_path / "brain" / "c1" / ".system_generated" / "logs"
    write_jsonl(logs / "transcript.jsonl", [{"source": "USER_EXPLICIT", "content": "short"}])
    write_jsonl(logs / "transcript_full.jsonl", [{"source": "USER_EXPLICIT", "content": "full"}])
    assert [summary.title for summary in discover("antigravity", tmp_path)] == ["short"]
    assert READER.default_root({}, Path("/h")) == Path("/h/.gemini/antigravity-cli")
