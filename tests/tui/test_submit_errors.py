"""Send errors are explained in plain words, with their stable code, and promise the draft is kept."""

from __future__ import annotations

import pytest
from sessionref_tui.submit_errors import MENTION_IN_NEW_SESSION_KEY, describe_send_error


def test_known_code_gets_plain_words_message_and_code() -> None:
    text = describe_send_error("SESSION_REFERENCE_SELF_REFERENCE", 'session "abc" cannot reference itself')
    assert text == (
        'A session cannot mention itself: session "abc" cannot reference itself '
        "(SESSION_REFERENCE_SELF_REFERENCE) — your draft is kept."
    )


def test_unknown_code_still_names_the_code() -> None:
    assert describe_send_error("WEIRD", "") == "Could not send (WEIRD) — your draft is kept."


@pytest.mark.parametrize("code", ["AGENT_READ_ONLY", "STORE_READ_ONLY"])
def test_read_only_is_one_sentence_with_the_code_and_the_next_step(code: str) -> None:
    message = "session 'abc' is read-only; start a new session and mention it with @ to continue from it"
    text = describe_send_error(code, message)
    assert text == (
        f"This session is read-only ({code}): Ctrl+F opens a new session that mentions it, with your draft."
    )
    assert text.count("read-only") == 1 and text.count(code) == 1


def test_the_key_named_in_the_refusal_is_the_apps() -> None:
    from sessionref_tui.chat_screen import MENTION_IN_NEW_SESSION

    assert MENTION_IN_NEW_SESSION_KEY.lower() == MENTION_IN_NEW_SESSION
