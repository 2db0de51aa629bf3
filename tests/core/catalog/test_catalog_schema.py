"""`catalog init` creates the schema once, upgrades nothing twice, and refuses a newer catalog."""

from __future__ import annotations

import pytest
from pg_server import Catalog
from sessionref.catalog.connection import connect
from sessionref.catalog.errors import CATALOG_SCHEMA_MISSING, CATALOG_SCHEMA_NEWER, CatalogError
from sessionref.catalog.schema import LATEST_VERSION, check_schema, migrate


def test_a_database_without_a_catalog_says_its_owner_runs_init(blank_database: Catalog) -> None:
    connection = connect(blank_database.url("alice"))
    try:
        with pytest.raises(CatalogError) as raised:
            check_schema(connection)
    finally:
        connection.close()
    assert raised.value.code == CATALOG_SCHEMA_MISSING
    assert "catalog init" in raised.value.message


def test_init_applies_every_step_once(blank_database: Catalog) -> None:
    connection = connect(blank_database.url(blank_database.owner))
    try:
        first = migrate(connection)
        again = migrate(connection)
        assert [step.version for step in first] == list(range(1, LATEST_VERSION + 1))
        assert again == []
        assert check_schema(connection) == LATEST_VERSION
    finally:
        connection.close()


def test_a_newer_catalog_is_refused_by_init_and_by_readers(blank_database: Catalog) -> None:
    connection = connect(blank_database.url(blank_database.owner))
    try:
        migrate(connection)
        blank_database.admin(
            "INSERT INTO sessionref.schema_version (version, summary) VALUES (%s, 'from the future')",
            LATEST_VERSION + 1,
        )
        with pytest.raises(CatalogError) as by_init:
            migrate(connection)
        with pytest.raises(CatalogError) as by_reader:
            check_schema(connection)
    finally:
        blank_database.admin("DELETE FROM sessionref.schema_version WHERE version > %s", LATEST_VERSION)
        connection.close()
    assert by_init.value.code == CATALOG_SCHEMA_NEWER
    assert by_reader.value.code == CATALOG_SCHEMA_NEWER


def test_a_catalog_of_the_first_version_upgrades_with_init(
    blank_database: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sessionref.catalog.schema as schema

    blank_database.admin("DROP SCHEMA IF EXISTS sessionref CASCADE")  # a catalog as version 1 left it
    connection = connect(blank_database.url(blank_database.owner))
    try:
        with monkeypatch.context() as patched:
            patched.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:1])
            patched.setattr(schema, "LATEST_VERSION", 1)
            assert [step.version for step in migrate(connection)] == [1]
        with pytest.raises(CatalogError) as older:
            check_schema(connection)
        assert older.value.code == CATALOG_SCHEMA_MISSING
        assert [step.version for step in migrate(connection)] == list(range(2, LATEST_VERSION + 1))
        assert check_schema(connection) == LATEST_VERSION
        with connection.transaction():
            searched = connection.execute(
                "SELECT complete FROM sessionref.search_messages("
                "to_tsquery('simple', 'anything'), NULL, NULL, '-', 100, 100) WHERE id IS NULL"
            ).fetchall()
        assert searched == [(True,)]
    finally:
        connection.close()


def test_a_catalog_of_version_3_keeps_its_sessions_findable_after_init(
    blank_database: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sessionref.catalog.discovery as discovery
    import sessionref.catalog.schema as schema

    blank_database.admin("DROP SCHEMA IF EXISTS sessionref CASCADE")
    owner = connect(blank_database.url(blank_database.owner))
    alice = connect(blank_database.url("alice"))
    try:
        with monkeypatch.context() as patched:
            patched.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:3])
            patched.setattr(schema, "LATEST_VERSION", 3)
            migrate(owner)
        for number in range(40):  # published while the catalog had version 3
            title = "the billing-retry loop" if number % 10 == 0 else f"chore {number}"
            blank_database.admin(
                "INSERT INTO sessionref.sessions"
                " (id, owner, machine, source, title, cwd, created_at, updated_at)"
                " VALUES (%s, 'alice', 'laptop', 'store', %s, '/home/alice/api', 0, %s)",
                f"old-{number:02d}",
                title,
                number,
            )
        assert [step.version for step in migrate(owner)] == list(range(4, LATEST_VERSION + 1))
        vacuumed = owner.execute(
            "SELECT relname, vacuum_count FROM pg_stat_user_tables"
            " WHERE schemaname = 'sessionref' AND relname IN ('sessions', 'places') ORDER BY relname"
        ).fetchall()
        owner.rollback()
        # Rewritten and filled by version 4, then vacuumed: their index-only reads stay index-only.
        assert [(name, count >= 1) for name, count in vacuumed] == [("places", True), ("sessions", True)]
        monkeypatch.setattr(discovery, "PROBE_ROWS", 3)  # the old rows are found by the new index
        found = discovery.find_sessions(
            alice, needle="billing-retry", folder="api", exclude_id="", exclude_machine="-", limit=50
        )
        assert [session.id for session in found] == ["old-30", "old-20", "old-10", "old-00"]
    finally:
        owner.close()
        alice.close()
        blank_database.admin("DROP SCHEMA IF EXISTS sessionref CASCADE")
