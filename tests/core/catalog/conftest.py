"""A real PostgreSQL for the catalog tests: one server per test session, one database per module.

The server is started by the fixture itself (initdb into a temporary folder as an unprivileged
user, a Unix socket in that folder, no TCP; stopped at the end), so plain `pytest` works. When it
cannot be started: in CI (`CI=true`) every test that needs it fails; elsewhere it is skipped.
"""

from __future__ import annotations

import itertools
import os
import signal
from collections.abc import Iterator
from types import FrameType

import pytest
from pg_server import Catalog, PostgresServer, ServerUnavailable

_databases = itertools.count(1)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PostgresServer]:
    """The session's PostgreSQL server (fails in CI, skips elsewhere, when it cannot start)."""
    try:
        server = PostgresServer.create()
        server.start()
    except ServerUnavailable as error:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"the catalog tests need PostgreSQL and it could not be started: {error}")
        pytest.skip(f"PostgreSQL is not available here: {error}")
    # A run stopped with SIGTERM (a CI timeout, `kill`) would skip this teardown and leave the server
    # running: turn the signal into the KeyboardInterrupt pytest unwinds its fixtures for.
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield server
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.remove()


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


PEOPLE = ("alice", "bob", "carol")


def _superuser(server: PostgresServer, sql: str) -> None:
    import psycopg

    with psycopg.connect(server.conninfo(), autocommit=True) as connection:
        connection.execute(sql)


def _ensure_roles(server: PostgresServer) -> None:
    import psycopg

    with psycopg.connect(server.conninfo(), autocommit=True) as connection:
        known = {row[0] for row in connection.execute("SELECT rolname FROM pg_roles").fetchall()}
        for role in (*PEOPLE, "catalog_owner"):
            if role not in known:
                connection.execute(f"CREATE ROLE {role} LOGIN")
        if "team" not in known:
            connection.execute("CREATE ROLE team NOLOGIN")
            connection.execute("GRANT team TO carol")


@pytest.fixture(scope="module")
def blank_database(pg_server: PostgresServer) -> Catalog:
    """A new empty database owned by `catalog_owner` (no catalog yet), for this test module."""
    _ensure_roles(pg_server)
    name = f"catalog_{next(_databases)}"
    _superuser(pg_server, f"CREATE DATABASE {name} OWNER catalog_owner")
    return Catalog(pg_server, name, "catalog_owner")


@pytest.fixture(scope="module")
def catalog(blank_database: Catalog) -> Catalog:
    """This module's database with the catalog created by its owner (`catalog init`)."""
    from sessionref.catalog.connection import connect
    from sessionref.catalog.schema import migrate

    connection = connect(blank_database.url(blank_database.owner))
    try:
        migrate(connection)
    finally:
        connection.close()
    return blank_database
