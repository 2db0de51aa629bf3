"""The single error type the session store raises, with stable codes."""

from __future__ import annotations

from enum import StrEnum
from typing import Final

from sessionref.contract.errors import CodedError
from sessionref.service.errors import ServiceCode


class StoreCode(StrEnum):
    """The store's stable error codes (docs/errors.md); not-found is `ServiceCode.SESSION_NOT_FOUND`."""

    SESSION_EXISTS = "STORE_SESSION_EXISTS"
    INVALID_LOG = "STORE_INVALID_LOG"
    INVALID_ID = "STORE_INVALID_ID"
    INVALID_EVENT = "STORE_INVALID_EVENT"
    INVALID_TITLE = "STORE_INVALID_TITLE"
    NOTHING_TO_COMPACT = "STORE_NOTHING_TO_COMPACT"
    READ_ONLY = "STORE_READ_ONLY"
    UNREADABLE = "STORE_UNREADABLE"
    CLOSED = "STORE_CLOSED"
    LOG_BUSY = "STORE_LOG_BUSY"
    """Another program is writing the log right now (its last line is incomplete): nothing is appended."""
    LOCK_TIMEOUT = "STORE_LOCK_TIMEOUT"
    """Another sessionref process held the session's lock for longer than `LOCK_TIMEOUT_SECONDS`."""
    LOG_TOO_LARGE = "STORE_LOG_TOO_LARGE"
    """A compressed log expands beyond `MAX_DECOMPRESSED_LOG_BYTES`."""
    UNSAFE_PATH = "STORE_UNSAFE_PATH"
    """A path below the store root is a symbolic link (or otherwise leads out of the root): refused."""
    WRITE_FAILED = "STORE_WRITE_FAILED"
    """The file system refused a write (no space left, a read-only file system, an I/O error)."""
    LOG_LINKED = "STORE_LOG_LINKED"
    """A log has more than one hard link, so an append could change a file outside the root: refused."""


# The names the store's modules import; each is the catalogue member above.
STORE_SESSION_NOT_FOUND: Final = ServiceCode.SESSION_NOT_FOUND
STORE_SESSION_EXISTS: Final = StoreCode.SESSION_EXISTS
STORE_INVALID_LOG: Final = StoreCode.INVALID_LOG
STORE_INVALID_ID: Final = StoreCode.INVALID_ID
STORE_INVALID_EVENT: Final = StoreCode.INVALID_EVENT
STORE_INVALID_TITLE: Final = StoreCode.INVALID_TITLE
STORE_NOTHING_TO_COMPACT: Final = StoreCode.NOTHING_TO_COMPACT
STORE_READ_ONLY: Final = StoreCode.READ_ONLY
STORE_UNREADABLE: Final = StoreCode.UNREADABLE
STORE_CLOSED: Final = StoreCode.CLOSED
STORE_LOG_BUSY: Final = StoreCode.LOG_BUSY
STORE_LOCK_TIMEOUT: Final = StoreCode.LOCK_TIMEOUT
STORE_LOG_TOO_LARGE: Final = StoreCode.LOG_TOO_LARGE
STORE_UNSAFE_PATH: Final = StoreCode.UNSAFE_PATH
STORE_WRITE_FAILED: Final = StoreCode.WRITE_FAILED
STORE_LOG_LINKED: Final = StoreCode.LOG_LINKED


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
