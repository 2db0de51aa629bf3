"""What the app says about sent messages that came back, and how it keeps those of other sessions."""

from __future__ import annotations

from sessionref.host.workspace import ReturnedDraft
from sessionref_tui.returned_drafts import KeptDrafts, kept_notice, restored_notice, returned_notice


def drafts(*reasons: str, session_id: str = "s") -> list[ReturnedDraft]:
    return [ReturnedDraft(session_id, f"draft {index}", reason) for index, reason in enumerate(reasons)]


def test_stopped_replies_say_how_many_queued_messages_came_back() -> None:
    assert returned_notice(drafts("cancelled")) == "1 queued message is back in the composer."
    assert returned_notice(drafts("cancelled", "cancelled")) == "2 queued messages are back in the composer."


def test_a_message_dropped_for_another_reason_says_why() -> None:
    assert returned_notice(drafts("error")) == (
        "1 message was not delivered (error) and is back in the composer."
    )
    assert returned_notice(drafts("rejected", "cancelled")) == (
        "2 messages were not delivered (rejected) and are back in the composer."
    )


def test_drafts_kept_for_another_session_name_it_and_say_when_they_come_back() -> None:
    text = kept_notice(drafts("cancelled", "cancelled"), "Plan")
    assert text.startswith("2 messages to “Plan” were not delivered:")
    assert "back in the composer when you open it" in text
    assert restored_notice(drafts("error")) == "1 unsent message is back in the composer."


def test_kept_drafts_are_per_session_in_order_and_taken_once() -> None:
    kept = KeptDrafts()
    kept.keep("a", drafts("cancelled", session_id="a"))
    kept.keep("b", drafts("error", session_id="b"))
    kept.keep("a", [ReturnedDraft("a", "later", "error")])
    assert "a" in kept and "c" not in kept
    assert [draft.draft for draft in kept.take("a")] == ["draft 0", "later"]
    assert kept.take("a") == []
    assert [draft.draft for draft in kept.take("b")] == ["draft 0"]
