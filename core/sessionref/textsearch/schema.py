"""The SQLite layout of the conversation index, and opening it safely (create, check, reset).

One file beside the discovery index (`TEXT_INDEX_FILE_NAME`), a cache of the logs: when it is
missing, of another schema or folding version, or fails `PRAGMA quick_check`, it is deleted
and created empty, and the caller feeds it again.

Tables: `sessions` (session id → a small key that is never reused, plus what was fed),
`messages` (one row per projected message: session key, seq, kind, time; its id is the
full-text row id, allocated in insertion order and never reused), `session_runs` (the first row
id of each run of consecutive row ids one session was given: a search learns a row's session
from them without a join, see `row_sessions`), `message_texts` (the original
text, kept apart so that candidate lookups stay on small pages) and the full-text shards
`words_<n>`: contentless FTS5 tables, each holding the row ids `n << SHARD_BITS` up to the next
shard. Sharding by insertion order bounds what any one statement reads (see docs/benchmarks.md,
"Search what was said").
"""

from __future__ import annotations

import logging
import sqlite3
import unicodedata
from pathlib import Path

from sessionref.store.cache_file import CacheFileUnusable, SlowStatements, connect_cache, open_cache_file
from sessionref.textsearch.errors import TEXT_SEARCH_UNAVAILABLE, TextSearchError
from sessionref.textsearch.normalize import FOLD_VERSION

log = logging.getLogger("sessionref.textsearch")

TEXT_INDEX_FILE_NAME = ".sessionref-text.sqlite"
SCHEMA_VERSION = "3"  # 2: `session_runs`; 3: `word_lists`, `listed_shards`
# Row ids per full-text shard (2**18 = 262,144 messages).
SHARD_BITS = 18
# FTS5 prefix indexes, in characters: a word being typed is looked up as a prefix from 3
# characters on; 3 and 4 are indexed, longer prefixes are merged per shard.
PREFIX_INDEXES = "3 4"
TOKENIZER = "unicode61 remove_diacritics 2"
# FTS5 keeps this many bytes of new postings in memory before writing a segment (default 1 MB):
# larger means fewer, larger segments and about half the indexing CPU of a first build.
FTS_HASH_BYTES = 64 * 1024 * 1024
# FTS5's own default: merge 4 segments of a level into one as writes go.
FTS_AUTOMERGE = 4
# Bytes of the index file searches map into memory (SQLite caps it at its compile-time maximum,
# 2 GB here); 20 random message texts: 0.68 ms through read(), 0.21 ms mapped.
READER_MMAP_BYTES = 1 << 31
# Values bound in one `IN (...)` list at most (below SQLite's historical limit of 999).
SQL_VARIABLES = 900
# Run on a throw-away in-memory database to learn whether this SQLite has FTS5.
FTS5_PROBE = f"CREATE VIRTUAL TABLE probe USING fts5(body, tokenize='{TOKENIZER}')"

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE sessions (
    key INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL UNIQUE,
    through_seq INTEGER,
    source TEXT NOT NULL DEFAULT '',
    messages INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY,
    session INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    kind INTEGER NOT NULL,
    time INTEGER NOT NULL
);
CREATE UNIQUE INDEX messages_by_session ON messages (session, seq);
CREATE TABLE session_runs (first_id INTEGER PRIMARY KEY, session INTEGER NOT NULL);
CREATE TABLE message_texts (id INTEGER PRIMARY KEY, text NOT NULL);
CREATE TABLE listed_shards (shard INTEGER PRIMARY KEY);
CREATE TABLE word_lists (
    word TEXT NOT NULL,
    shard INTEGER NOT NULL,
    documents INTEGER NOT NULL,
    best BLOB,
    PRIMARY KEY (word, shard)
) WITHOUT ROWID;
CREATE INDEX word_lists_by_shard ON word_lists (shard);
"""
# `messages.kind`
KIND_USER = 0
KIND_ASSISTANT = 1
KIND_CHECKPOINT = 2


def _fold_version() -> str:
    """Folding's version with the Unicode database it uses: removing a row re-folds its text, which
    must give exactly the words it was indexed with, so a Python with other Unicode data rebuilds."""
    return f"{FOLD_VERSION}/{unicodedata.unidata_version}"


def shard_of(row_id: int) -> int:
    """The shard holding `row_id`."""
    return row_id >> SHARD_BITS


def shard_range(shard: int) -> tuple[int, int]:
    """The first and last row id a shard holds."""
    return shard << SHARD_BITS, ((shard + 1) << SHARD_BITS) - 1


def shard_table(shard: int) -> str:
    """The FTS5 table name of a shard."""
    return f"words_{shard}"


def ensure_fts5() -> None:
    """Raise `TEXT_SEARCH_UNAVAILABLE` unless this Python's SQLite can create an FTS5 table."""
    try:
        probe = sqlite3.connect(":memory:")
    except sqlite3.Error as error:  # pragma: no cover - sqlite3 itself unusable
        raise TextSearchError(TEXT_SEARCH_UNAVAILABLE, f"SQLite cannot be used: {error}") from error
    try:
        probe.execute(FTS5_PROBE)
    except sqlite3.Error as error:
        raise TextSearchError(
            TEXT_SEARCH_UNAVAILABLE,
            f"conversation search needs SQLite with FTS5, and this Python's SQLite "
            f"{sqlite3.sqlite_version} cannot create one ({error})",
        ) from error
    finally:
        probe.close()


def connect(path: Path, *, reader: bool = False, slow: SlowStatements | None = None) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), usable from any thread.

    The search connection reads through a memory map (`READER_MMAP_BYTES`): a keystroke reads
    twenty message texts scattered over the file, a third of the time of `read()` calls.
    """
    return connect_cache(path, mmap_bytes=READER_MMAP_BYTES if reader else None, slow=slow)


def list_shards(connection: sqlite3.Connection) -> list[int]:
    """The shard numbers that exist, in increasing order."""
    names = connection.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'words_[0-9]*' "
        "AND name NOT GLOB 'words_*_*'"
    ).fetchall()
    return sorted(int(name.removeprefix("words_")) for (name,) in names)


def create_shard(connection: sqlite3.Connection, shard: int, automerge: int = FTS_AUTOMERGE) -> None:
    """Create a shard's FTS5 table (inside the caller's write transaction) if it does not exist."""
    table = shard_table(shard)
    exists = connection.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
    ).fetchone()
    if exists:
        return
    connection.execute(
        f"CREATE VIRTUAL TABLE {table} USING fts5(body, content='', tokenize='{TOKENIZER}', "
        f"detail=full, prefix='{PREFIX_INDEXES}')"
    )
    connection.execute(f"INSERT INTO {table}({table}, rank) VALUES ('hashsize', {FTS_HASH_BYTES})")
    connection.execute(f"INSERT INTO {table}({table}, rank) VALUES ('automerge', {automerge})")


def _problem(connection: sqlite3.Connection, verify: bool) -> str | None:
    """Why an existing index cannot be used, or None."""
    rows = dict(connection.execute("SELECT key, value FROM meta").fetchall())
    if rows.get("schema_version") != SCHEMA_VERSION:
        return "it has another schema version"
    if rows.get("fold_version") != _fold_version():
        return "its text folding is of another version (or of another Unicode database)"
    if verify:
        result = connection.execute("PRAGMA quick_check").fetchall()
        if result != [("ok",)]:
            return f"PRAGMA quick_check failed ({result[0][0] if result else 'no answer'})"
    return None


def _create(connection: sqlite3.Connection) -> None:
    connection.execute("BEGIN IMMEDIATE")
    has_schema = connection.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] > 0
    if not has_schema:  # another process may have created it meanwhile
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                connection.execute(statement)
        connection.executemany(
            "INSERT INTO meta (key, value) VALUES (?, ?)",
            [
                ("schema_version", SCHEMA_VERSION),
                ("fold_version", _fold_version()),
                ("next_id", "1"),
                ("rows", "0"),
            ],
        )
    connection.execute("COMMIT")


def open_index_file(
    path: Path, *, verify: bool, slow: SlowStatements | None = None
) -> tuple[sqlite3.Connection, bool]:
    """A connection to a usable index at `path` and whether it was (re)created empty.

    WAL (searches read while a batch is written) and no fsync per commit (see `cache_file`).
    Raises `TEXT_SEARCH_UNAVAILABLE` when the file can neither be used nor created.
    """
    try:
        return open_cache_file(
            path,
            what="conversation index",
            problem=lambda connection: _problem(connection, verify),
            create=_create,
            log=log,
            slow=slow,
        )
    except CacheFileUnusable as error:
        raise TextSearchError(TEXT_SEARCH_UNAVAILABLE, error.reason) from error


def is_damage(error: sqlite3.Error) -> bool:
    """True for errors that mean the file is damaged or not ours (as opposed to busy, full or interrupted)."""
    code = getattr(error, "sqlite_errorcode", None)
    if code in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
        return True
    message = str(error)
    return isinstance(error, sqlite3.DatabaseError) and (
        "malformed" in message or "no such table" in message or "not a database" in message
    )
