"""The inbox claim rule."""

from __future__ import annotations

from sessionref.agent import make_user_message
from sessionref.agent.inbox import Inbox


def texts(messages: list[dict]) -> list[str]:
    return [message["content"][0]["text"] for message in messages]


def test_claim_takes_all_next_step_then_one_next_turn_at_a_turn_boundary() -> None:
    inbox = Inbox()
    for text in ("t1", "t2"):
        inbox.push("next-turn", make_user_message(text))
    for text in ("s1", "s2"):
        inbox.push("next-step", make_user_message(text))
    assert texts(inbox.claim(turn_boundary=True)) == ["s1", "s2", "t1"]
    assert texts(inbox.claim(turn_boundary=True)) == ["t2"]
    assert inbox.claim(turn_boundary=True) == []


def test_claim_inside_a_turn_leaves_next_turn_items() -> None:
    inbox = Inbox()
    inbox.push("next-turn", make_user_message("t1"))
    inbox.push("next-step", make_user_message("s1"))
    assert texts(inbox.claim(turn_boundary=False)) == ["s1"]
    assert inbox.next_step == []
    assert inbox.has_work()
    assert texts([m for _, m in inbox.pending()]) == ["t1"]


def test_remove_and_clear() -> None:
    inbox = Inbox()
    kept = make_user_message("kept")
    gone = make_user_message("gone")
    inbox.push("next-turn", kept)
    inbox.push("next-step", gone)
    assert inbox.remove(gone["id"]) is gone
    assert inbox.remove(gone["id"]) is None
    assert inbox.clear() == [kept]
    assert not inbox.has_work()
