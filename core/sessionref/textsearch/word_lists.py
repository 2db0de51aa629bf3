"""Per-word impact lists of sealed shards: a word's best messages by bm25, computed once.

A shard is sealed once every row id of its range has been given out: no row is ever added to it
again, so its bm25 statistics (messages, mean length, each word's document count) change only
when rows are deleted from it. The best `LIST_ROWS` messages of a word in a sealed shard, with
their bm25, are then the same at every keystroke; they are computed once the shard has sealed
(in the background, after the update that sealed it) and stored, for the words a keystroke could not rank
live: in at least `LIST_MIN_DOCUMENTS` messages of the shard and in less than `LIST_MAX_SHARE` of
them (a very common word scores nothing, docs/search.md "Ranking a keystroke"). A list's last
score bounds every message of the word it does not hold, which is what lets a search settle a
first screen from lists (`search.Searcher`). Deleting rows from a shard changes its statistics:
the writer drops that shard's lists (`drop_lists`), and searches score the shard live or fall
back until `list_worker.ListWorker` has listed it again.
"""

from __future__ import annotations

import sqlite3
import struct
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from sessionref.textsearch.schema import shard_range, shard_table

# Best messages kept per word and shard (a keystroke first reads 160 of a shard, then 640).
LIST_ROWS = 640
# A word held by fewer messages of a shard is scored live (about 1.6 ms per 1,000 at 100,000
# sessions): a full ranking's budget covers that many in each of eight shards.
LIST_MIN_DOCUMENTS = 1_000
# A word in at least this share of a shard's messages gets no list: at `VERY_COMMON_SHARE` (5 %)
# of the whole index it scores nothing; the margin covers its estimate's error.
LIST_MAX_SHARE = 0.0625
# One stored entry: the row id's offset in its shard and the message's relevance (-bm25).
_ENTRY = struct.Struct("<Id")


@dataclass(frozen=True, slots=True)
class WordList:
    """A word's list in one sealed shard: its document count there and its best `(row_id,
    relevance)`, best first (`best` is empty for a word too common to list)."""

    documents: int
    best: tuple[tuple[int, float], ...]


def listed_shards(connection: sqlite3.Connection) -> set[int]:
    """The shards whose lists are computed."""
    return {shard for (shard,) in connection.execute("SELECT shard FROM listed_shards")}


def unlisted_sealed(connection: sqlite3.Connection, shards: Iterable[int], next_id: int) -> list[int]:
    """The sealed shards among `shards` (every row id given out, `next_id` is past them) whose
    lists are not computed, oldest first."""
    done = listed_shards(connection)
    return sorted(shard for shard in shards if shard_range(shard)[1] < next_id and shard not in done)


@dataclass(frozen=True, slots=True)
class ShardLists:
    """The lists of one sealed shard as computed (`compute_lists`), to be stored (`store_lists`):
    `messages` is how many the shard held then."""

    shard: int
    messages: int
    entries: tuple[tuple[str, int, bytes | None], ...]  # (word, documents, packed best or None)


def shard_messages(connection: sqlite3.Connection, shard: int) -> int:
    """How many messages `shard` holds (a sealed shard's count only falls, when rows are deleted)."""
    return int(connection.execute(f"SELECT count(*) FROM {shard_table(shard)}_docsize").fetchone()[0])


def compute_lists(
    connection: sqlite3.Connection, shard: int, stopped: Callable[[], bool] = lambda: False
) -> ShardLists | None:
    """The lists of sealed `shard`, read on `connection` (it writes nothing but a temp table):
    each word in at least `LIST_MIN_DOCUMENTS` of its messages, with its best `LIST_ROWS` by bm25
    (none for a word in `LIST_MAX_SHARE` of them or more); None once `stopped()` (asked between
    words). About 1.3 µs per message of each word: 8.5 s for a full shard."""
    table = shard_table(shard)
    vocabulary = f"temp.vocabulary_{shard}"
    messages = shard_messages(connection, shard)
    connection.execute(f"DROP TABLE IF EXISTS {vocabulary}")
    connection.execute(f"CREATE VIRTUAL TABLE {vocabulary} USING fts5vocab(main, {table}, 'row')")
    try:
        words = connection.execute(
            f"SELECT term, doc FROM {vocabulary} WHERE doc >= ?", (LIST_MIN_DOCUMENTS,)
        ).fetchall()
    finally:
        connection.execute(f"DROP TABLE {vocabulary}")
    low = shard_range(shard)[0]
    entries: list[tuple[str, int, bytes | None]] = []
    for word, documents in words:
        if stopped():
            return None
        if documents >= LIST_MAX_SHARE * messages:
            entries.append((word, documents, None))
            continue
        best = connection.execute(
            f"SELECT rowid, -bm25({table}) AS score FROM {table} WHERE {table} MATCH ? "
            "ORDER BY score DESC LIMIT ?",
            (f'"{word}"', LIST_ROWS),
        ).fetchall()
        packed = b"".join(_ENTRY.pack(row_id - low, score) for row_id, score in best)
        entries.append((word, documents, packed))
    return ShardLists(shard, messages, tuple(entries))


def store_lists(connection: sqlite3.Connection, lists: ShardLists) -> bool:
    """Store `lists` (inside the caller's write transaction) unless rows of their shard were
    deleted since they were computed; returns whether they were stored."""
    if shard_messages(connection, lists.shard) != lists.messages:
        return False
    connection.execute("DELETE FROM word_lists WHERE shard = ?", (lists.shard,))
    connection.executemany(
        "INSERT INTO word_lists (word, shard, documents, best) VALUES (?, ?, ?, ?)",
        [(word, lists.shard, documents, best) for word, documents, best in lists.entries],
    )
    connection.execute("INSERT OR REPLACE INTO listed_shards (shard) VALUES (?)", (lists.shard,))
    return True


def drop_lists(connection: sqlite3.Connection, shards: Iterable[int]) -> None:
    """Forget the lists of `shards` (rows were deleted from them: their bm25 changed)."""
    for shard in shards:
        connection.execute("DELETE FROM listed_shards WHERE shard = ?", (shard,))
        connection.execute("DELETE FROM word_lists WHERE shard = ?", (shard,))


def word_lists(connection: sqlite3.Connection, word: str, shards: Sequence[int]) -> dict[int, WordList]:
    """`word`'s lists in those of `shards` that hold one (a listed shard without one holds the
    word in fewer than `LIST_MIN_DOCUMENTS` messages)."""
    wanted = set(shards)
    found: dict[int, WordList] = {}
    for shard, documents, packed in connection.execute(
        "SELECT shard, documents, best FROM word_lists WHERE word = ?", (word,)
    ):
        if shard in wanted:
            low = shard_range(shard)[0]
            best = tuple((low + offset, score) for offset, score in _ENTRY.iter_unpack(packed or b""))
            found[shard] = WordList(int(documents), best)
    return found


def usable(lists: Mapping[int, WordList]) -> dict[int, WordList]:
    """The lists that rank (those of words too common to list hold no rows)."""
    return {shard: found for shard, found in lists.items() if found.best}
