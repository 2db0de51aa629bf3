"""Bounded excerpts: how a message quotes input that may be arbitrarily long.

A user can pass a 10 MB argument and a file can hold a 10 MB line; a message that quotes either
must stay a readable line. :func:`bounded_excerpt` keeps short text as it is and cuts long text
to its head and tail around a marker saying how much was left out, so both ends stay
recognisable. The result is still data: callers make it inert before a terminal shows it.
"""

from __future__ import annotations

from typing import Final

EXCERPT_CHARS: Final = 200
"""Characters of a quoted value (an argument, an id, a line) kept in a message by default."""

MESSAGE_CHARS: Final = 2000
"""Characters of a whole error message a host prints; enough for every message we compose."""


def bounded_excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """``text`` itself when it has at most ``limit`` characters, else its head and tail around
    ``…[N characters left out]…``; the result never has more than ``limit`` characters plus the marker.
    """
    if limit < 2:
        raise ValueError("an excerpt keeps at least 2 characters")
    if len(text) <= limit:
        return text
    tail = limit // 3
    head = limit - tail
    left_out = len(text) - head - tail
    return f"{text[:head]}…[{left_out} characters left out]…{text[len(text) - tail :]}"
