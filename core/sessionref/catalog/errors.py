"""The coded errors of the catalog: every failure a person sees names a stable code, never a password."""

from __future__ import annotations

from typing import Final

from sessionref.contract.errors import CodedError

CATALOG_DRIVER_MISSING: Final = "CATALOG_DRIVER_MISSING"
"""psycopg is not installed (`pip install 'sessionref[catalog]'`)."""
CATALOG_UNREACHABLE: Final = "CATALOG_UNREACHABLE"
"""The server did not answer, refused the connection or went away."""
CATALOG_LOGIN_REFUSED: Final = "CATALOG_LOGIN_REFUSED"
"""The server refused the role, its password or the database."""
CATALOG_SCHEMA_MISSING: Final = "CATALOG_SCHEMA_MISSING"
"""The database has no catalog yet: its owner runs `sessionref catalog init`."""
CATALOG_SCHEMA_NEWER: Final = "CATALOG_SCHEMA_NEWER"
"""The catalog was created by a newer sessionref than this one: this version refuses to touch it."""
CATALOG_NOT_PERMITTED: Final = "CATALOG_NOT_PERMITTED"
"""The server refused the statement for this role (privileges or row-level security)."""
CATALOG_SESSION_NOT_FOUND: Final = "CATALOG_SESSION_NOT_FOUND"
"""No session with that id is visible to this role (unknown, or neither owned nor shared)."""
CATALOG_ROLE_UNKNOWN: Final = "CATALOG_ROLE_UNKNOWN"
"""`share --with ROLE` names a role the server does not know."""
CATALOG_QUERY_FAILED: Final = "CATALOG_QUERY_FAILED"
"""Any other error the server reported."""
CATALOG_TIMED_OUT: Final = "CATALOG_TIMED_OUT"
"""The catalog did not answer within its deadline (the query was cancelled)."""


class CatalogError(CodedError):
    """A catalog failure: `code` is one of the `CATALOG_*` codes; the message never holds a password."""

    @property
    def is_connection_failure(self) -> bool:
        """Whether retrying later may help (the server is down, restarting or unreachable)."""
        return self.code in (CATALOG_UNREACHABLE, CATALOG_TIMED_OUT)
