"""Conversation search finds the same messages whichever plan answers it (newest first, the index of
sessions' words, or reading on), under the caller's visibility, and says when it left matches unread."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from pg_server import Catalog
from sessionref.catalog.connection import connect

WORDS = ("deploy", "retry", "budget", "billing", "migration", "timeout", "cache", "token")
QUERIES = (
    # (tsquery the search asks for, the terms the index may be asked for one of)
    ("retry", ["retry"]),
    ("unicorn", ["unicorn"]),
    ("mig:*", ["mig:*"]),
    ("billing & ret:*", ["billing", "ret:*"]),
    ("(retry <-> budget)", ["retry", "budget"]),
    ("deploy & unicorn", ["deploy", "unicorn"]),
    ("deploy & unicorn", None),  # no terms: the index is asked for the whole query
)
SEARCH = (
    "SELECT id, seq, complete FROM sessionref.search_messages(to_tsquery('simple', %s), NULL, NULL, '-',"
    " %s, 100, %s, %s, %s, %s, %s, %s, %s, %s)"
)


@pytest.fixture(scope="module")
def said(catalog: Catalog) -> Iterator[None]:
    """200 sessions of alice's and bob's, 6 messages each; bob shares every fourth with alice."""
    rng = random.Random(11)
    catalog.admin("DELETE FROM sessionref.sessions")
    with psycopg.connect(catalog.server.conninfo(database=catalog.database)) as connection:
        cursor = connection.cursor()
        for number in range(200):
            owner = "alice" if rng.random() < 0.6 else "bob"
            cursor.execute(
                "INSERT INTO sessionref.sessions (id, owner, machine, source, created_at, updated_at)"
                " VALUES (%s, %s, %s, 'store', 0, %s) RETURNING key",
                (f"s-{number:03d}", owner, f"{owner}-box", 1_000 + number * 10 + rng.randint(0, 9)),
            )
            key = cursor.fetchone()[0]  # type: ignore[index]
            for seq in range(1, 7):
                words = rng.sample(WORDS, rng.randint(2, 5))
                if rng.random() < 0.02:
                    words.insert(rng.randrange(len(words) + 1), "unicorn")
                cursor.execute(
                    "INSERT INTO sessionref.messages (session_key, seq, owner, role, kind, time, text)"
                    " VALUES (%s, %s, %s, 'user', 'message', %s, %s)",
                    (key, seq, owner, seq, " ".join(words)),
                )
    catalog.admin(
        "INSERT INTO sessionref.shares (session_key, shared_with, owner)"
        " SELECT key, 'alice'::regrole, owner FROM sessionref.sessions WHERE owner = 'bob' AND key % 4 = 0"
    )
    yield
    catalog.admin("DELETE FROM sessionref.sessions")


def _visible_matches(catalog: Catalog, query: str) -> set[tuple[Any, ...]]:
    rows = catalog.admin(
        "SELECT s.id, m.seq FROM sessionref.messages m JOIN sessionref.sessions s ON s.key = m.session_key"
        " WHERE m.words @@ to_tsquery('simple', %s)"
        " AND (s.owner = 'alice' OR s.key IN (SELECT session_key FROM sessionref.shares))",
        query,
    )
    return set(rows)


MOST = 2_000_000_000
PLANS = {
    # name: (examined, walk, first, enough, estimate_most, candidates, walk_more, checked_more)
    "newest first reads everything": (5_000, 100_000, 100_000, 40, -1, 5_000, 100_000, 100_000),
    "the index of sessions' words": (5_000, 6, 100_000, 100_000, MOST, 100_000, 6, 6),
    "reading on newest first": (5_000, 6, 100_000, 100_000, -1, 5_000, 100_000, 100_000),
    "reading on past common words": (5_000, 6, 2, 100_000, MOST, 5_000, 100_000, 100_000),
}


@pytest.mark.parametrize("plan", PLANS)
def test_every_plan_finds_the_same_visible_messages(catalog: Catalog, said: None, plan: str) -> None:
    connection = connect(catalog.url("alice"))
    try:
        for query, terms in QUERIES:
            rows = connection.execute(SEARCH, (query, *PLANS[plan][:1], terms, *PLANS[plan][1:])).fetchall()
            found = {(row[0], row[1]) for row in rows if row[0] is not None}
            status = [row[2] for row in rows if row[0] is None]
            assert found == _visible_matches(catalog, query), (plan, query)
            assert len(status) == 1
            if not plan.startswith(
                "reading on"
            ):  # it stops where the measured rate says, so it never claims more
                assert status == [True], (plan, query)
    finally:
        connection.close()


def test_a_search_that_leaves_matches_unread_says_so(catalog: Catalog, said: None) -> None:
    connection = connect(catalog.url("alice"))
    try:
        for plan in PLANS.values():
            rows = connection.execute(SEARCH, ("retry", 3, None, *plan[1:])).fetchall()
            assert len([row for row in rows if row[0] is not None]) >= 3
            assert [row[2] for row in rows if row[0] is None] == [False]
        capped = connection.execute(
            SEARCH, ("retry", 5_000, None, 6, 100_000, 100_000, MOST, 10, 6, 6)
        ).fetchall()
        assert [row[2] for row in capped if row[0] is None] == [False]  # the index gave only 10 sessions
        short = connection.execute(
            SEARCH, ("retry", 5_000, None, 6, 100_000, 100_000, -1, 5_000, 3, 100_000)
        ).fetchall()
        assert [row[2] for row in short if row[0] is None] == [False]  # reading on stopped early
    finally:
        connection.close()


def _words_of(catalog: Catalog, session_id: str) -> tuple[object, object]:
    """A session's words as the search sees them (NULL: unknown), and whether they follow its times."""
    rows = catalog.admin(
        "SELECT w.words::text, w.updated_at = s.updated_at AND w.owner = s.owner"
        " FROM sessionref.session_words w JOIN sessionref.sessions s ON s.key = w.session_key"
        " WHERE s.id = %s",
        session_id,
    )
    return rows[0] if rows else (None, None)


def _found_by_each_plan(catalog: Catalog, word: str) -> list[set[tuple[Any, ...]]]:
    """What alice finds for `word` with each of `PLANS`, as (session id, seq) pairs."""
    connection = connect(catalog.url("alice"))
    try:
        answers = []
        for plan in PLANS.values():
            rows = connection.execute(SEARCH, (word, plan[0], [word], *plan[1:])).fetchall()
            answers.append({(row[0], row[1]) for row in rows if row[0] is not None})
        return answers
    finally:
        connection.close()


def _add_session(catalog: Catalog, session_id: str, texts: list[str]) -> int:
    key = catalog.admin(
        "INSERT INTO sessionref.sessions (id, owner, machine, source, created_at, updated_at)"
        " VALUES (%s, 'alice', 'alice-box', 'store', 0, 1) RETURNING key",  # the oldest
        session_id,
    )[0][0]
    for seq, text in enumerate(texts, start=1):
        catalog.admin(
            "INSERT INTO sessionref.messages (session_key, seq, owner, role, kind, time, text)"
            " VALUES (%s, %s, 'alice', 'user', 'message', %s, %s)",
            key,
            seq,
            seq,
            text,
        )
    assert isinstance(key, int)
    return key


def test_a_sessions_words_follow_every_write_of_its_messages(catalog: Catalog, said: None) -> None:
    key = _add_session(catalog, "words-1", ["the deploy stalled", "a retry fixed it"])
    words, follows = _words_of(catalog, "words-1")
    assert words == "'a' 'deploy' 'fixed' 'it' 'retry' 'stalled' 'the'" and follows
    catalog.admin("UPDATE sessionref.messages SET text = 'zeppelin' WHERE session_key = %s AND seq = 1", key)
    catalog.admin(  # as the publisher writes a changed message
        "INSERT INTO sessionref.messages AS m (session_key, seq, owner, role, kind, time, text)"
        " VALUES (%s, 2, 'alice', 'user', 'message', 2, 'a quetzal fixed it')"
        " ON CONFLICT (session_key, seq) DO UPDATE SET text = excluded.text",
        key,
    )
    catalog.admin("UPDATE sessionref.sessions SET updated_at = 2 WHERE key = %s", key)
    words, follows = _words_of(catalog, "words-1")
    assert {"'zeppelin'", "'quetzal'", "'deploy'"} <= set(str(words).split()) and follows  # never shrinks
    assert _found_by_each_plan(catalog, "zeppelin") == [{("words-1", 1)}] * len(PLANS)
    catalog.admin("DELETE FROM sessionref.sessions WHERE key = %s", key)
    assert _words_of(catalog, "words-1") == (None, None)


def test_a_session_with_too_many_words_is_always_read(catalog: Catalog, said: None) -> None:
    rng = random.Random(5)
    texts = [
        " ".join("".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=12)) for _ in range(7_500))
        for _ in range(7)
    ]
    key = _add_session(catalog, "words-big", [*texts, "the narwhal answer"])
    assert _words_of(catalog, "words-big")[0] is None  # past SESSION_WORDS_BYTES: unknown
    try:
        assert _found_by_each_plan(catalog, "narwhal") == [{("words-big", 8)}] * len(PLANS)
    finally:
        catalog.admin("DELETE FROM sessionref.sessions WHERE key = %s", key)


def test_nobody_reads_the_sessions_words_but_the_search(catalog: Catalog, said: None) -> None:
    connection = connect(catalog.url("alice"))
    try:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            connection.execute("SELECT count(*) FROM sessionref.session_words")
    finally:
        connection.close()


def test_a_search_leaves_the_callers_plan_settings_as_they_were(catalog: Catalog, said: None) -> None:
    connection = connect(catalog.url("alice"))
    try:
        with connection.transaction():
            before = connection.execute(
                "SELECT current_setting('enable_indexscan'), current_setting('enable_sort')"
            ).fetchone()
            for plan in PLANS.values():  # the index step switches plans for itself, then back
                connection.execute(SEARCH, ("retry", plan[0], ["retry"], *plan[1:])).fetchall()
            after = connection.execute(
                "SELECT current_setting('enable_indexscan'), current_setting('enable_sort')"
            ).fetchone()
        assert before == after == ("on", "on")
    finally:
        connection.close()
