"""The single error type the session store raises, with stable codes."""

from __future__ import annotations

from sessionref.errors import CodedError

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


class StoreError(CodedError):
    """A store failure a user can be shown: `code` is stable, `message` is one readable sentence."""
