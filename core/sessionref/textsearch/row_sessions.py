"""`RowSessions`: which session a message row belongs to, without asking SQLite per row.

Row ids are allocated in insertion order and never reused, and the writer gives each session of
a batch one run of consecutive ids, recording the run's first id in `session_runs` (see
`schema`). So the session of a row is that of the last run starting at or before it: a binary
search over two compact arrays, refreshed with the runs added since (another connection
committed), instead of joining every full-text match to `messages` (about half of a keystroke's
SQLite time before). Runs of removed sessions may linger or be gone: their row ids are never
matched again, so neither answer is ever asked for.
"""

from __future__ import annotations

import sqlite3
from array import array
from bisect import bisect_right
from collections.abc import Iterable


class RowSessions:
    """The run map of one index file, loaded on a connection the caller serialises."""

    def __init__(self) -> None:
        self._starts = array("q")
        self._keys = array("q")

    def refresh(self, connection: sqlite3.Connection) -> None:
        """Load the runs recorded since the last refresh (all of them the first time)."""
        last = self._starts[-1] if self._starts else -1
        for first_id, key in connection.execute(
            "SELECT first_id, session FROM session_runs WHERE first_id > ? ORDER BY first_id", (last,)
        ):
            self._starts.append(first_id)
            self._keys.append(key)

    def keyed(self, rows: Iterable[tuple[int, float]], exclude_key: int) -> list[tuple[int, int, float]]:
        """`(row_id, session_key, relevance)` of `(row_id, relevance)` rows, leaving out `exclude_key`'s."""
        starts, keys = self._starts, self._keys
        found: list[tuple[int, int, float]] = []
        for row_id, relevance in rows:
            position = bisect_right(starts, row_id) - 1
            key = keys[position] if position >= 0 else -1
            if key != exclude_key:
                found.append((row_id, key, relevance))
        return found
