"""The words the index holds, for the loose plan's second chances: typos and joined identifiers.

A word of loose text the index finds little of may be misspelt (`dependancy`) or two words
written as one (`maxretries` for "max_retries", which the index holds as `max` `retries`). Both
are answered from the index's own vocabulary, read through FTS5's `fts5vocab` tables, created in
the connection's `temp` schema (in memory: nothing is written to the index file):

* `near(word)`: the words one edit away (a letter added, removed, replaced, or two adjacent ones
  swapped), for words of `TYPO_MIN_CHARS` letters or more, sharing the first letter (a typo in the
  first letter is rare, and this keeps the scan to one range of the vocabulary);
* `splits(word)`: the ways `word` is two words the index holds, each of `SPLIT_MIN_CHARS` or more.

A search runs in a read transaction that is rolled back, which drops a `temp` table created in
it: so each lookup creates its table if it does not exist (a schema lookup when it does).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Final

from sessionref.service.fuzzy_titles import one_edit_apart
from sessionref.textsearch.schema import shard_table

TYPO_MIN_CHARS: Final = 5
"""Words shorter than this are never corrected: one edit in a short word is another word."""

SPLIT_MIN_CHARS: Final = 3
"""Each half of a joined word is at least this long."""

NEAR_WORDS: Final = 4
"""Corrections kept per word at most, the most frequent first."""

VOCABULARY_SHARDS: Final = 2
"""Shards whose vocabulary is read (the newest): the words people use now."""


class Vocabulary:
    """Looks words up in the newest shards' vocabularies on one read connection."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection

    def _table(self, shard: int) -> str:
        table = f"vocabulary_{shard}"
        source = shard_table(shard)
        self._connection.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{table} USING fts5vocab(main, {source}, 'row')"
        )
        return table

    def documents(self, word: str, shards: Sequence[int]) -> int:
        """Messages holding `word` in the newest `VOCABULARY_SHARDS` of `shards` (newest first)."""
        total = 0
        for shard in shards[:VOCABULARY_SHARDS]:
            found = self._connection.execute(
                f"SELECT doc FROM temp.{self._table(shard)} WHERE term = ?", (word,)
            ).fetchone()
            total += int(found[0]) if found else 0
        return total

    def near(self, word: str, shards: Sequence[int]) -> list[str]:
        """The held words one edit from `word` (same first letter), most frequent first."""
        if len(word) < TYPO_MIN_CHARS or not word.isascii() or not word.isalpha():
            return []
        counts: dict[str, int] = {}
        low, high = word[0], chr(ord(word[0]) + 1)
        for shard in shards[:VOCABULARY_SHARDS]:
            for term, documents in self._connection.execute(
                f"SELECT term, doc FROM temp.{self._table(shard)} WHERE term >= ? AND term < ?", (low, high)
            ):
                if abs(len(term) - len(word)) <= 1 and one_edit_apart(word, term):
                    counts[term] = counts.get(term, 0) + int(documents)
        return sorted(counts, key=lambda term: (-counts[term], term))[:NEAR_WORDS]

    def splits(self, word: str, shards: Sequence[int]) -> list[tuple[str, str]]:
        """The ways `word` is two held words (`maxretries` → `max` + `retries`)."""
        if not word.isascii() or not word.isalnum() or len(word) < 2 * SPLIT_MIN_CHARS:
            return []
        return [
            (word[:cut], word[cut:])
            for cut in range(SPLIT_MIN_CHARS, len(word) - SPLIT_MIN_CHARS + 1)
            if self.documents(word[:cut], shards) and self.documents(word[cut:], shards)
        ]
