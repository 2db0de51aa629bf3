"""Cursor's agent transcripts: nested and flat chats, the prompt wrappers, what is projected, the folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from histories import discover, projected, read_listed, write_jsonl
from sessionref.sources.cursor_agent import READER, folder_key, prompt_text
from sessionref.sources.reader import WalkContext

CART = "cursor-agent:3a4b5c6d-0000-4000-8000-0000000ca001"
COUPON = "cursor-agent:3a4b5c6d-0000-4000-8000-0000000ca002"
NOTES = "cursor-agent:3a4b5c6d-0000-4000-8000-0000000ca005"


def test_nested_and_flat_transcripts_with_a_prompt_are_sessions_and_nothing_else_is() -> None:
    listed = {summary.session_id: summary for summary in discover("cursor-agent")}
    # Not listed: a transcript of tool steps only, a sub-agent's, and an older plain-text one.
    assert set(listed) == {CART, COUPON, NOTES}
    assert listed[CART].title == "Why is the cart total off by a cent?"  # the first prompt, its wrappers gone
    assert listed[COUPON].title == "Rename the coupon flag"
    assert listed[CART].created_at == listed[CART].updated_at > 0  # no times in the records: the mtime


def test_only_prompts_and_the_answers_text_are_projected_and_a_bad_line_costs_one_line() -> None:
    (cart,) = [summary for summary in discover("cursor-agent") if summary.session_id == CART]
    session = read_listed(cart)
    assert projected(session) == [
        ("user", "Why is the cart total off by a cent?", False),
        ("assistant", "The total rounds each line; round once at the end.", False),
        ("user", "Add a test for it", False),
        ("assistant", "Added test_total_rounds_once.", False),
    ]
    assert session.skipped_lines == 1  # `not json at all`; the unknown records are read and left out
    (coupon,) = [summary for summary in discover("cursor-agent") if summary.session_id == COUPON]
    assert projected(read_listed(coupon))[1] == ("assistant", "Renamed it to \ndiscount_enabled.", False)


def test_the_project_folder_names_a_known_folder_and_is_never_decoded() -> None:
    context = WalkContext(known_cwds=frozenset({"/home/ana/shop", "/Users/ana/notes", "/home/ana"}))
    listed = {summary.session_id: summary.cwd for summary in discover("cursor-agent", context=context)}
    assert listed == {CART: "/home/ana/shop", COUPON: "/home/ana/shop", NOTES: "/Users/ana/notes"}
    unknown = {summary.session_id: summary.cwd for summary in discover("cursor-agent")}
    assert set(unknown.values()) == {None}  # no known folder matches: no folder, not a guess
    ambiguous = WalkContext(
        known_cwds=frozenset({"/home/ana/shop", "/home/ana-shop"})
    )  # both `home-ana-shop`
    listed = {summary.session_id: summary.cwd for summary in discover("cursor-agent", context=ambiguous)}
    assert listed[CART] is None and listed[COUPON] is None


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("<user_query>fix it</user_query>", "fix it"),
        (
            "<timestamp>Mon 9:00</timestamp>\n<user_query>\nfix it\n</user_query>\n<context>x</context>",
            "fix it",
        ),
        ("<timestamp>Mon 9:00</timestamp>plain words", "plain words"),
        ("<user_query>half written", "half written"),
        ("<timestamp>only a time</timestamp>", ""),
    ],
)
def test_the_prompt_is_what_the_person_typed(content: str, expected: str) -> None:
    assert prompt_text(content) == expected


def test_a_transcript_named_unlike_its_chat_folder_is_not_read(tmp_path: Path) -> None:
    chats = tmp_path / "projects" / "p" / "agent-transcripts"
    write_jsonl(chats / "c1" / "c1.jsonl", [{"role": "user", "message": {"content": "kept"}}])
    write_jsonl(chats / "c1" / "other.jsonl", [{"role": "user", "message": {"content": "not this one"}}])
    assert [summary.title for summary in discover("cursor-agent", tmp_path)] == ["kept"]
    assert READER.default_root({}, Path("/h")) == Path("/h/.cursor")
    assert folder_key("/home/ana/my.app") == "home-ana-my-app" == folder_key("-home-ana-my-app")
