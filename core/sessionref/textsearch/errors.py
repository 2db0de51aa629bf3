"""The error type of the conversation search engine, with stable codes."""

from __future__ import annotations

from sessionref.contract.errors import CodedError

# This Python's SQLite has no FTS5, or the index file cannot be opened or created.
TEXT_SEARCH_UNAVAILABLE = "TEXT_SEARCH_UNAVAILABLE"
# The caller cancelled a running search.
TEXT_SEARCH_CANCELLED = "TEXT_SEARCH_CANCELLED"
# A bad argument (a limit that is not a positive integer, rows that are not a session's projection).
TEXT_SEARCH_INVALID_ARGUMENT = "TEXT_SEARCH_INVALID_ARGUMENT"
# The index was used after `close()`.
TEXT_SEARCH_CLOSED = "TEXT_SEARCH_CLOSED"


class TextSearchError(CodedError):
    """A conversation search failure a user can be shown: `code` is stable, `message` is one sentence."""
