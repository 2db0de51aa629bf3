"""Who may see a session (`share`, `unshare`) and what the catalog holds for this role (`status`).

A share names a PostgreSQL role: a person, or a group role whose members (PostgreSQL's own
`GRANT team TO bob`) then see the session too. Only a session's owner can share it, and row-level
security enforces that, whatever SQL is sent; these functions add readable errors on top.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sessionref.catalog.errors import CATALOG_ROLE_UNKNOWN, CATALOG_SESSION_NOT_FOUND, CatalogError


@dataclass(frozen=True, slots=True)
class MachineSummary:
    """What this role published from one machine: sessions, messages, and when last (epoch ms)."""

    machine: str
    sessions: int
    messages: int
    last_published_ms: int | None


@dataclass(frozen=True, slots=True)
class CatalogStatus:
    """`catalog status`: the server, who we are, the schema, what we published, what others share."""

    server_version: str
    database: str
    role: str
    schema_version: int
    published: tuple[MachineSummary, ...]
    shared_with_me: int
    """Sessions of other roles this role can see."""
    shares_given: int
    """Shares this role granted."""


def _owned_keys(cursor: Any, session_id: str, machine: str | None) -> list[int]:
    query = "SELECT key FROM sessionref.sessions WHERE owner = current_user AND id = %s"
    params: list[Any] = [session_id]
    if machine is not None:
        query += " AND machine = %s"
        params.append(machine)
    cursor.execute(query, params)
    keys = [row[0] for row in cursor.fetchall()]
    if not keys:
        raise CatalogError(
            CATALOG_SESSION_NOT_FOUND,
            f"you have published no session {session_id!r}: publish it first (`sessionref catalog publish "
            f"--session {session_id}`)",
        )
    return keys


def _role_oid(cursor: Any, role: str) -> int:
    cursor.execute("SELECT oid FROM pg_roles WHERE rolname = %s", (role,))
    row = cursor.fetchone()
    if row is None:
        raise CatalogError(CATALOG_ROLE_UNKNOWN, f"the catalog's server has no role {role!r}")
    oid: int = row[0]
    return oid


def share(connection: Any, session_id: str, role: str, *, machine: str | None = None) -> int:
    """Let `role` (and its members) see this role's session `session_id`; copies shared (new ones)."""
    with connection.transaction(), connection.cursor() as cursor:
        oid = _role_oid(cursor, role)
        added = 0
        for key in _owned_keys(cursor, session_id, machine):
            cursor.execute(
                "INSERT INTO sessionref.shares (session_key, shared_with) VALUES (%s, %s)"
                " ON CONFLICT DO NOTHING",
                (key, oid),
            )
            added += cursor.rowcount
    return added


def unshare(connection: Any, session_id: str, role: str, *, machine: str | None = None) -> int:
    """Stop sharing this role's session `session_id` with `role`; how many shares were removed."""
    with connection.transaction(), connection.cursor() as cursor:
        oid = _role_oid(cursor, role)
        keys = _owned_keys(cursor, session_id, machine)
        cursor.execute(
            "DELETE FROM sessionref.shares WHERE session_key = ANY(%s) AND shared_with = %s", (keys, oid)
        )
        removed: int = cursor.rowcount
    return removed


def status(connection: Any, schema_version: int) -> CatalogStatus:
    """Where the catalog is, who we are, and what we published from each machine."""
    with connection.transaction(), connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('server_version'), current_database(), current_user")
        version, database, role = cursor.fetchone()
        cursor.execute(
            "SELECT machine, count(*), coalesce(sum(messages), 0),"
            " (extract(epoch FROM max(published_at)) * 1000)::bigint"
            " FROM sessionref.sessions WHERE owner = current_user GROUP BY machine ORDER BY machine"
        )
        published = tuple(MachineSummary(*row) for row in cursor.fetchall())
        cursor.execute("SELECT count(*) FROM sessionref.sessions WHERE owner <> current_user")
        shared_with_me = cursor.fetchone()[0]
        cursor.execute("SELECT count(*) FROM sessionref.shares WHERE owner = current_user")
        given = cursor.fetchone()[0]
    return CatalogStatus(version, database, role, schema_version, published, shared_with_me, given)
