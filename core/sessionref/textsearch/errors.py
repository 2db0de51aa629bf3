"""The error type of the conversation search engine, with stable codes."""

from __future__ import annotations

from enum import StrEnum
from typing import Final

from sessionref.contract.errors import CodedError


class TextSearchCode(StrEnum):
    """The conversation search engine's stable error codes (docs/errors.md)."""

    UNAVAILABLE = "TEXT_SEARCH_UNAVAILABLE"
    """This Python's SQLite has no FTS5, or the index file cannot be opened or created."""
    CANCELLED = "TEXT_SEARCH_CANCELLED"
    """The caller cancelled a running search."""
    INVALID_ARGUMENT = "TEXT_SEARCH_INVALID_ARGUMENT"
    """A bad argument (a limit that is not a positive integer, rows that are not a session's projection)."""
    CLOSED = "TEXT_SEARCH_CLOSED"
    """The index was used after `close()`."""


# The names the engine's modules import; each is the catalogue member above.
TEXT_SEARCH_UNAVAILABLE: Final = TextSearchCode.UNAVAILABLE
TEXT_SEARCH_CANCELLED: Final = TextSearchCode.CANCELLED
TEXT_SEARCH_INVALID_ARGUMENT: Final = TextSearchCode.INVALID_ARGUMENT
TEXT_SEARCH_CLOSED: Final = TextSearchCode.CLOSED


class TextSearchError(CodedError):
    """A conversation search failure a user can be shown: `code` is stable, `message` is one sentence."""
