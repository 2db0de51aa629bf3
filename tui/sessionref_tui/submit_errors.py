"""Plain-words explanations for the errors a send can end with (shown in the composer).

Pure and Textual-free: the app shows the returned string as literal text. The
stable code is always included so a user can search for it or report it.
"""

from __future__ import annotations

from sessionref.agent.errors import AgentCode
from sessionref.contract.errors import ErrorCode
from sessionref.service.errors import ServiceCode
from sessionref.store.errors import StoreCode

PLAIN_WORDS: dict[str, str] = {
    ErrorCode.INVALID_REFERENCE: "A mention in your message is malformed",
    ErrorCode.SELF_REFERENCE: "A session cannot mention itself",
    ErrorCode.TOO_MANY: "Too many sessions mentioned",
    ErrorCode.READ_FAILED: "A mentioned session could not be read",
    ErrorCode.BUDGET_EXCEEDED: "A mentioned session does not fit the size budget",
    ErrorCode.CANCELLED: "Sending was cancelled",
    ErrorCode.INVALID_CONFIG: "The reference settings are invalid",
    AgentCode.EMPTY_MESSAGE: "There is nothing to send",
    ServiceCode.SESSION_NOT_FOUND: "The session no longer exists",
    StoreCode.UNREADABLE: "The session store could not be read",
    StoreCode.INVALID_LOG: "A session log is damaged",
}


READ_ONLY_CODES: frozenset[str] = frozenset({AgentCode.READ_ONLY, StoreCode.READ_ONLY})
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
