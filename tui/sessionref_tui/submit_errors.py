"""Plain-words explanations for the errors a send can end with (shown in the composer).

Pure and Textual-free: the app shows the returned string as literal text. The
stable code is always included so a user can search for it or report it.
"""

from __future__ import annotations

PLAIN_WORDS: dict[str, str] = {
    "SESSION_REFERENCE_INVALID_REFERENCE": "A mention in your message is malformed",
    "SESSION_REFERENCE_SELF_REFERENCE": "A session cannot mention itself",
    "SESSION_REFERENCE_TOO_MANY": "Too many sessions mentioned",
    "SESSION_REFERENCE_READ_FAILED": "A mentioned session could not be read",
    "SESSION_REFERENCE_BUDGET_EXCEEDED": "A mentioned session does not fit the size budget",
    "SESSION_REFERENCE_CANCELLED": "Sending was cancelled",
    "SESSION_REFERENCE_INVALID_CONFIG": "The reference settings are invalid",
    "STORE_READ_ONLY": "This session is read-only",
    "AGENT_READ_ONLY": "This session is read-only (a compressed DSH log); start a new session to reply",
    "AGENT_EMPTY_MESSAGE": "There is nothing to send",
    "STORE_SESSION_NOT_FOUND": "The session no longer exists",
    "STORE_UNREADABLE": "The session store could not be read",
    "STORE_INVALID_LOG": "A session log is damaged",
}


def describe_send_error(code: str, message: str) -> str:
    """`<plain words>: <message> (<CODE>) — your draft is kept.`; unknown codes get a generic headline."""
    headline = PLAIN_WORDS.get(code, "Could not send")
    detail = message.strip()
    text = f"{headline}: {detail}" if detail and detail != headline else headline
    return f"{text} ({code}) — your draft is kept."
