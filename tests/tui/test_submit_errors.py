"""Send errors are explained in plain words, with their stable code, and promise the draft is kept."""

from __future__ import annotations

from sessionref_tui.submit_errors import describe_send_error


def test_known_code_gets_plain_words_message_and_code() -> None:
    text = describe_send_error("SESSION_REFERENCE_SELF_REFERENCE", 'session "abc" cannot reference itself')
    assert text == (
        'A session cannot mention itself: session "abc" cannot reference itself '
        "(SESSION_REFERENCE_SELF_REFERENCE) — your draft is kept."
    )


def test_unknown_code_still_names_the_code() -> None:
    assert describe_send_error("WEIRD", "") == "Could not send (WEIRD) — your draft is kept."
