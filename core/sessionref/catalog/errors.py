"""The coded errors of the catalog: every failure a person sees names a stable code, never a password."""

from __future__ import annotations

from enum import StrEnum
from typing import Final

from sessionref.contract.errors import CodedError


class CatalogCode(StrEnum):
    """The catalog's stable error codes (docs/errors.md)."""

    DRIVER_MISSING = "CATALOG_DRIVER_MISSING"
    """psycopg is not installed (`pip install 'sessionref[catalog]'`)."""
    UNREACHABLE = "CATALOG_UNREACHABLE"
    """The server did not answer, refused the connection or went away."""
    LOGIN_REFUSED = "CATALOG_LOGIN_REFUSED"
    """The server refused the role, its password or the database."""
    SCHEMA_MISSING = "CATALOG_SCHEMA_MISSING"
    """The database has no catalog yet: its owner runs `sessionref catalog init`."""
    SCHEMA_NEWER = "CATALOG_SCHEMA_NEWER"
    """The catalog was created by a newer sessionref than this one: this version refuses to touch it."""
    NOT_PERMITTED = "CATALOG_NOT_PERMITTED"
    """The server refused the statement for this role (privileges or row-level security)."""
    SESSION_NOT_FOUND = "CATALOG_SESSION_NOT_FOUND"
    """No session with that id is visible to this role (unknown, or neither owned nor shared)."""
    ROLE_UNKNOWN = "CATALOG_ROLE_UNKNOWN"
    """`share --with ROLE` names a role the server does not know."""
    QUERY_FAILED = "CATALOG_QUERY_FAILED"
    """Any other error the server reported."""
    TIMED_OUT = "CATALOG_TIMED_OUT"
    """The catalog did not answer within its deadline (the query was cancelled)."""


# The names the catalog's modules import; each is the catalogue member above.
CATALOG_DRIVER_MISSING: Final = CatalogCode.DRIVER_MISSING
CATALOG_UNREACHABLE: Final = CatalogCode.UNREACHABLE
CATALOG_LOGIN_REFUSED: Final = CatalogCode.LOGIN_REFUSED
CATALOG_SCHEMA_MISSING: Final = CatalogCode.SCHEMA_MISSING
CATALOG_SCHEMA_NEWER: Final = CatalogCode.SCHEMA_NEWER
CATALOG_NOT_PERMITTED: Final = CatalogCode.NOT_PERMITTED
CATALOG_SESSION_NOT_FOUND: Final = CatalogCode.SESSION_NOT_FOUND
CATALOG_ROLE_UNKNOWN: Final = CatalogCode.ROLE_UNKNOWN
CATALOG_QUERY_FAILED: Final = CatalogCode.QUERY_FAILED
CATALOG_TIMED_OUT: Final = CatalogCode.TIMED_OUT


class CatalogError(CodedError):
    """A catalog failure: `code` is one of the `CATALOG_*` codes; the message never holds a password."""

    @property
    def is_connection_failure(self) -> bool:
        """Whether retrying later may help (the server is down, restarting or unreachable)."""
        return self.code in (CATALOG_UNREACHABLE, CATALOG_TIMED_OUT)
