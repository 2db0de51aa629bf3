"""The notice that says where returned messages went, and why when they were not simply stopped."""

from __future__ import annotations

from sessionref.host.workspace import ReturnedDraft
from sessionref_tui.repl.queue_view import returned_notice


def drafts(*reasons: str) -> list[ReturnedDraft]:
    return [ReturnedDraft("s", f"draft {index}", reason) for index, reason in enumerate(reasons)]


def test_stopped_messages_are_counted_with_their_number() -> None:
    assert returned_notice(drafts("cancelled"), "the prompt") == "1 queued message is back in the prompt"
    assert returned_notice(drafts("cancelled", "cancelled"), "the prompt") == (
        "2 queued messages are back in the prompt"
    )


def test_other_reasons_are_named_once_each() -> None:
    notice = returned_notice(drafts("rejected", "cancelled", "rejected", "error"), "the prompt")
    assert notice == "4 queued messages are back in the prompt (not delivered: error, rejected)"


def test_a_hostile_reason_is_inert() -> None:
    assert "\x1b" not in returned_notice(drafts("\x1b[2Jbad"), "the prompt")
