"""Plain-words explanations for the errors a send can end with (shown in the composer).

Pure and Textual-free: the app shows the returned string as literal text. The
stable code is always included so a user can search for it or report it.
"""

from __future__ import annotations

# Codes are spelled out here, not imported from their layers' enums: the app imports this module
# before its first frame, and the store and the agent load after it. tests/test_error_catalogue.py
# holds every code here to the catalogue (docs/errors.md).
PLAIN_WORDS: dict[str, str] = {
    "SESSION_REFERENCE_INVALID_REFERENCE": "A mention in your message is malformed",
    "SESSION_REFERENCE_SELF_REFERENCE": "A session cannot mention itself",
    "SESSION_REFERENCE_TOO_MANY": "Too many sessions mentioned",
    "SESSION_REFERENCE_READ_FAILED": "A mentioned session could not be read",
    "SESSION_REFERENCE_BUDGET_EXCEEDED": "A mentioned session does not fit the size budget",
    "SESSION_REFERENCE_CANCELLED": "Sending was cancelled",
    "SESSION_REFERENCE_INVALID_CONFIG": "The reference settings are invalid",
    "AGENT_EMPTY_MESSAGE": "There is nothing to send",
    "STORE_SESSION_NOT_FOUND": "The session no longer exists",
    "STORE_UNREADABLE": "The session store could not be read",
    "STORE_WRITE_FAILED": "The session log could not be written",
    "STORE_LOG_LINKED": "The session log has another hard link and is only read",
    "STORE_INVALID_LOG": "A session log is damaged",
}


READ_ONLY_CODES: frozenset[str] = frozenset({"AGENT_READ_ONLY", "STORE_READ_ONLY"})
"""Codes that mean the session on screen cannot be written (a DSH session, a compressed log)."""

MENTION_IN_NEW_SESSION_KEY = "Ctrl+F"
"""How the read-only refusal names the key of "New session mentioning this one"."""


def describe_send_error(code: str, message: str) -> str:
    """`<plain words>: <message> (<CODE>) — your draft is kept.`; unknown codes get a generic headline.

    A read-only session gets one sentence with the code and the next step, one key away (the
    store's own message would only say the same again).
    """
    if code in READ_ONLY_CODES:
        return (
            f"This session is read-only ({code}): {MENTION_IN_NEW_SESSION_KEY} opens a new session "
            "that mentions it, with your draft."
        )
    headline = PLAIN_WORDS.get(code, "Could not send")
    detail = message.strip()
    text = f"{headline}: {detail}" if detail and detail != headline else headline
    return f"{text} ({code}) — your draft is kept."
