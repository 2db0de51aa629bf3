"""Row-level security with three people: each sees their own rows and what is shared with them,
and nobody changes or deletes another person's rows, not even with SQL of their own."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from pg_server import Catalog
from sessionref.catalog.connection import connect
from sessionref.catalog.errors import CATALOG_ROLE_UNKNOWN, CATALOG_SESSION_NOT_FOUND, CatalogError
from sessionref.catalog.sharing import share, unshare


def _as(catalog: Catalog, role: str) -> psycopg.Connection[Any]:
    return psycopg.connect(catalog.url(role), autocommit=True)


@pytest.fixture(scope="module")
def published(catalog: Catalog) -> Iterator[Catalog]:
    """alice published one session with two messages; bob and carol published nothing."""
    with _as(catalog, "alice") as alice:
        key = alice.execute(
            "INSERT INTO sessionref.sessions (id, machine, source, title, created_at, updated_at)"
            " VALUES ('alice-1', 'laptop', 'store', 'the billing bug', 1, 2) RETURNING key"
        ).fetchone()[0]
        for seq, text in ((1, "why does billing fail"), (2, "a race in the retry")):
            alice.execute(
                "INSERT INTO sessionref.messages (session_key, seq, role, kind, time, text)"
                " VALUES (%s, %s, 'user', 'message', 1, %s)",
                (key, seq, text),
            )
    yield catalog


def _visible(catalog: Catalog, role: str) -> tuple[int, int]:
    with _as(catalog, role) as connection:
        sessions = connection.execute("SELECT count(*) FROM sessionref.sessions").fetchone()[0]
        messages = connection.execute("SELECT count(*) FROM sessionref.messages").fetchone()[0]
    return sessions, messages


def test_a_role_with_no_shares_sees_nothing_of_anyone_else(published: Catalog) -> None:
    assert _visible(published, "alice") == (1, 2)
    assert _visible(published, "bob") == (0, 0)
    assert _visible(published, "carol") == (0, 0)


def test_sharing_with_a_group_role_shows_the_session_to_its_members_only(published: Catalog) -> None:
    connection = connect(published.url("alice"))
    try:
        assert share(connection, "alice-1", "team") == 1
        assert share(connection, "alice-1", "team") == 0  # idempotent
        assert _visible(published, "carol") == (1, 2)  # carol is a member of team
        assert _visible(published, "bob") == (0, 0)
        assert unshare(connection, "alice-1", "team") == 1
        assert _visible(published, "carol") == (0, 0)
    finally:
        connection.close()


def test_sharing_needs_a_known_role_and_a_session_of_ones_own(published: Catalog) -> None:
    alice = connect(published.url("alice"))
    bob = connect(published.url("bob"))
    try:
        with pytest.raises(CatalogError) as unknown_role:
            share(alice, "alice-1", "nobody_at_all")
        with pytest.raises(CatalogError) as not_his:
            share(bob, "alice-1", "bob")
    finally:
        alice.close()
        bob.close()
    assert unknown_role.value.code == CATALOG_ROLE_UNKNOWN
    assert not_his.value.code == CATALOG_SESSION_NOT_FOUND


def test_raw_sql_cannot_change_delete_or_share_another_persons_rows(published: Catalog) -> None:
    key = published.admin("SELECT key FROM sessionref.sessions WHERE id = 'alice-1'")[0][0]
    connection = connect(published.url("alice"))
    try:
        share(connection, "alice-1", "bob")  # bob may read it: still not change it
    finally:
        connection.close()
    with _as(published, "bob") as bob:
        assert bob.execute("SELECT count(*) FROM sessionref.messages").fetchone()[0] == 2
        assert bob.execute("UPDATE sessionref.sessions SET title = 'mine now'").rowcount == 0
        assert bob.execute("UPDATE sessionref.messages SET text = 'rewritten'").rowcount == 0
        assert bob.execute("DELETE FROM sessionref.messages").rowcount == 0
        assert bob.execute("DELETE FROM sessionref.sessions").rowcount == 0
        assert bob.execute("DELETE FROM sessionref.shares").rowcount == 0
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            bob.execute(
                "INSERT INTO sessionref.messages (session_key, seq, role, kind, time, text)"
                " VALUES (%s, 3, 'user', 'message', 1, 'injected')",
                (key,),
            )
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            bob.execute(
                "INSERT INTO sessionref.sessions (id, owner, machine, source, created_at, updated_at)"
                " VALUES ('forged', 'alice', 'laptop', 'store', 1, 1)"
            )
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            bob.execute(
                "INSERT INTO sessionref.shares (session_key, shared_with) VALUES (%s, 'carol'::regrole)",
                (key,),
            )
    with _as(published, "alice") as alice, pytest.raises(psycopg.errors.InsufficientPrivilege):
        alice.execute("UPDATE sessionref.sessions SET owner = 'bob' WHERE id = 'alice-1'")
    assert published.admin("SELECT title FROM sessionref.sessions WHERE id = 'alice-1'") == [
        ("the billing bug",)
    ]
    texts = published.admin("SELECT text FROM sessionref.messages ORDER BY seq")
    assert texts == [("why does billing fail",), ("a race in the retry",)]
    assert published.admin("SELECT count(*) FROM sessionref.sessions WHERE id = 'forged'") == [(0,)]


def test_the_search_functions_apply_the_same_visibility_for_the_caller(published: Catalog) -> None:
    newest = (
        "SELECT rank, id FROM sessionref.find_recent(1, 2, %s, NULL, '', '-', 50, 100) WHERE id IS NOT NULL"
    )
    indexed = "SELECT rank, id FROM sessionref.find_indexed(1, %s, %s, NULL, '', '-', 50, %s)"
    said = (
        "SELECT id FROM sessionref.search_messages(to_tsquery('simple', %s), NULL, NULL, '-', 100, 100)"
        " WHERE id IS NOT NULL"
    )
    with _as(published, "alice") as alice:
        alice.execute("DELETE FROM sessionref.shares")  # alice shares nothing now
        assert alice.execute(newest, ("%bill%",)).fetchall() == [(1, "alice-1")]  # no cwd: rank 1
        for bare in ("%bill%", None):  # the names without separators, or with them joined
            assert alice.execute(indexed, ("%bill%", "%bill%", bare)).fetchall() == [(1, "alice-1")]
        assert alice.execute(said, ("billing",)).fetchall() == [("alice-1",)]
    with _as(published, "bob") as bob:
        assert bob.execute(newest, ("%bill%",)).fetchall() == []
        for bare in ("%bill%", None):
            assert bob.execute(indexed, ("%bill%", "%bill%", bare)).fetchall() == []
        assert bob.execute(said, ("billing",)).fetchall() == []
