"""The single error type the session store raises, with stable codes."""

from __future__ import annotations

from sessionref.contract.errors import CodedError

STORE_SESSION_NOT_FOUND = "STORE_SESSION_NOT_FOUND"
STORE_SESSION_EXISTS = "STORE_SESSION_EXISTS"
STORE_INVALID_LOG = "STORE_INVALID_LOG"
STORE_INVALID_ID = "STORE_INVALID_ID"
STORE_INVALID_EVENT = "STORE_INVALID_EVENT"
STORE_INVALID_TITLE = "STORE_INVALID_TITLE"
STORE_NOTHING_TO_COMPACT = "STORE_NOTHING_TO_COMPACT"
STORE_READ_ONLY = "STORE_READ_ONLY"
STORE_UNREADABLE = "STORE_UNREADABLE"
STORE_CLOSED = "STORE_CLOSED"
# Another program is writing the log right now (its last line is incomplete): nothing is appended.
STORE_LOG_BUSY = "STORE_LOG_BUSY"
# Another sessionref process held the session's lock for longer than `LOCK_TIMEOUT_SECONDS`.
STORE_LOCK_TIMEOUT = "STORE_LOCK_TIMEOUT"
# A compressed log expands beyond `MAX_DECOMPRESSED_LOG_BYTES`.
STORE_LOG_TOO_LARGE = "STORE_LOG_TOO_LARGE"
# A path below the store root is a symbolic link (or otherwise leads out of the root): refused.
STORE_UNSAFE_PATH = "STORE_UNSAFE_PATH"


ID_EXCERPT_CHARS = 120
"""Ids longer than this are quoted in messages as head…tail (an id may come from any file or argument)."""


def shown_id(session_id: object) -> str:
    """`session_id` for a message: whole up to `ID_EXCERPT_CHARS`, else its head and tail around "…"."""
    text = session_id if isinstance(session_id, str) else repr(session_id)
    if len(text) <= ID_EXCERPT_CHARS:
        return text
    half = (ID_EXCERPT_CHARS - 1) // 2
    return f"{text[:half]}…{text[-half:]}"


class StoreError(CodedError):
    """A store failure a user can be shown: `code` is stable, `message` is one readable sentence."""
