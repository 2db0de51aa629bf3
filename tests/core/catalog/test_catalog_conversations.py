"""Conversation search finds the same messages whichever plan answers it (newest first, reading on,
or the full-text index), under the caller's visibility, and says when it left matches unread."""

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
    " %s, 100, %s, %s, %s, %s, %s, %s, %s)"
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


PLANS = {
    # name: (examined, read, read_most, enough, rare, candidates, common)
    "newest first reads everything": (5_000, 100_000, 100_000, 40, 2, 5_000, 20),
    "the index for a rare word": (5_000, 6, 6, 100_000, 100_000, 5_000, 100_000),
    "reading on newest first": (5_000, 6, 100_000, 100_000, 0, 5_000, 20),
    "reading on for a common word": (5_000, 6, 100_000, 100_000, 100_000, 5_000, -1),
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
            SEARCH, ("retry", 5_000, None, 6, 6, 100_000, 100_000, 10, 100_000)
        ).fetchall()
        assert [row[2] for row in capped if row[0] is None] == [False]  # the index read only 10 candidates
        short = connection.execute(SEARCH, ("retry", 5_000, None, 6, 3, 100_000, 0, 5_000, 20)).fetchall()
        assert [row[2] for row in short if row[0] is None] == [False]  # reading on, even less than read first
    finally:
        connection.close()
