"""A bound on how deeply a log line or an appended event may nest, checked without recursion.

Python's `json` and every recursive walker after it (projection, stringify, the UIs) fail with
`RecursionError` somewhere near 1,000 levels, depending on how deep the caller already is.
Real events nest a dozen levels at most, so the store refuses anything deeper than
`MAX_NESTING_DEPTH` up front: an append gets `STORE_INVALID_EVENT`, and a log line is counted as
unreadable (skipped) instead of being handed on.
"""

from __future__ import annotations

from collections.abc import Iterable

MAX_NESTING_DEPTH = 200
"""Deepest accepted nesting of objects and arrays in one event (the event object itself is 1)."""


def nesting_exceeds(value: object, limit: int = MAX_NESTING_DEPTH) -> bool:
    """True when `value` nests dicts/lists (or tuples) more than `limit` deep. Iterative; stops at the limit.

    A structure that contains itself counts as too deep (it would nest forever).
    """
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children: Iterable[object]
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list | tuple))
    return False


def line_may_nest_deeper(line: bytes | bytearray, limit: int = MAX_NESTING_DEPTH) -> bool:
    """Cheap pre-check: a line with at most `limit` opening brackets cannot nest deeper than `limit`."""
    return line.count(b"[") + line.count(b"{") > limit
