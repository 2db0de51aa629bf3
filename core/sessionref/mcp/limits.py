"""Every limit an agent's request meets, and the byte cap on every response (docs/mcp.md).

A number larger than its maximum is clamped to it (the agent gets the maximum, not an error);
one below 1 gets 1. Text arguments longer than `MAX_QUERY_CHARS` are refused
(`MCP_QUERY_TOO_LONG`): a cut question would be answered wrongly.
"""

from __future__ import annotations

from typing import Final

LIST_DEFAULT: Final = 20
LIST_MAX: Final = 100
"""`list_sessions` and `resources/list`: sessions per page."""

SEARCH_DEFAULT: Final = 10
SEARCH_MAX: Final = 30
"""`search_conversations`: sessions found (one best message each)."""

MESSAGES_DEFAULT: Final = 10
MESSAGES_MAX: Final = 50
"""`get_messages`: messages on each side of `around_seq` (`before`, `after`)."""

MESSAGE_CHARS: Final = 4_000
"""`get_messages`: characters of one message's text (the rest is cut, `"cut": true`)."""

SNAPSHOT_MIN_BYTES: Final = 1_024
SNAPSHOT_MAX_BYTES: Final = 262_144
"""`get_snapshot` `max_bytes` (the snapshot JSON's budget, as `sessionref snapshot --max-bytes`);
without it the configured budget applies, clamped to these too."""

RESPONSE_MAX_BYTES: Final = 393_216
"""No response's text is longer than this many UTF-8 bytes: listings and message windows drop
their last items to fit, and a snapshot's budget leaves room for its frame and notices."""

MAX_QUERY_CHARS: Final = 2_000
"""Longest `query` or `session` text accepted."""

MAX_EXCLUDE: Final = 50
"""Session ids an `exclude` argument may list."""


def clamp(value: int | None, default: int, maximum: int, minimum: int = 1) -> int:
    """`value` (or `default` when None) within `[minimum, maximum]`."""
    chosen = default if value is None else value
    return max(minimum, min(maximum, chosen))
