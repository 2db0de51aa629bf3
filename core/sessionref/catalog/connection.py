"""Opening a connection to the catalog, and turning psycopg's errors into coded ones.

The only module that imports psycopg at run time (imported on first connection, so a host that
only configured a catalog pays for the driver when it first talks to it). Every error leaves
here as a `CatalogError` whose message is scrubbed of the connection string's passwords.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final

from sessionref.catalog.conninfo import redact, scrub
from sessionref.catalog.errors import (
    CATALOG_DRIVER_MISSING,
    CATALOG_LOGIN_REFUSED,
    CATALOG_NOT_PERMITTED,
    CATALOG_QUERY_FAILED,
    CATALOG_TIMED_OUT,
    CATALOG_UNREACHABLE,
    CatalogError,
)

CONNECT_TIMEOUT_SECONDS: Final = 5
"""How long opening a connection may take before the catalog counts as unreachable."""
APPLICATION_NAME: Final = "sessionref"

# SQLSTATE classes (PostgreSQL appendix A): 08 connection exception, 57P0x shut down / cannot connect
# now, 28 invalid authorization, 3D000 no such database, 42501 insufficient privilege, 57014 cancelled.
_LOGIN_STATES: Final = ("28000", "28P01", "3D000")
_PERMISSION_STATES: Final = ("42501",)


def _driver() -> Any:
    try:
        import psycopg
    except ImportError:
        raise CatalogError(
            CATALOG_DRIVER_MISSING,
            "the catalog needs psycopg 3: install sessionref with its catalog extra "
            "(pip install 'sessionref[catalog]')",
        ) from None
    return psycopg


def coded(error: BaseException, conninfo: str, doing: str) -> CatalogError:
    """`error` (a psycopg error) as a `CatalogError` saying what was being done, passwords scrubbed."""
    psycopg = _driver()
    state = getattr(error, "sqlstate", None) or ""
    detail = scrub(
        str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__, conninfo
    )
    where = redact(conninfo)
    if isinstance(error, psycopg.errors.QueryCanceled):
        return CatalogError(CATALOG_TIMED_OUT, f"{doing} was cancelled: {detail}")
    if (
        state in _LOGIN_STATES
        or "authentication failed" in detail
        or ("role" in detail and "does not exist" in detail)
    ):
        return CatalogError(CATALOG_LOGIN_REFUSED, f"{where} refused the login while {doing}: {detail}")
    if state in _PERMISSION_STATES or (state.startswith("42") and "row-level security" in detail):
        return CatalogError(CATALOG_NOT_PERMITTED, f"{doing} is not permitted for this role: {detail}")
    if isinstance(error, psycopg.OperationalError) or state.startswith(("08", "57P")):
        return CatalogError(CATALOG_UNREACHABLE, f"the catalog at {where} is unreachable ({doing}): {detail}")
    return CatalogError(CATALOG_QUERY_FAILED, f"the catalog failed while {doing}: {detail}")


def connect(conninfo: str, *, autocommit: bool = False) -> Any:
    """A new connection to the catalog at `conninfo`; `CatalogError` when it cannot be opened."""
    psycopg = _driver()
    try:
        connection = psycopg.connect(
            conninfo,
            autocommit=autocommit,
            connect_timeout=CONNECT_TIMEOUT_SECONDS,
            application_name=APPLICATION_NAME,
        )
    except psycopg.Error as error:
        raise coded(error, conninfo, "connecting") from None
    return connection


@contextmanager
def translated(conninfo: str, doing: str) -> Iterator[None]:
    """Run the block with every psycopg error raised as a coded, scrubbed `CatalogError`."""
    psycopg = _driver()
    try:
        yield
    except psycopg.Error as error:
        raise coded(error, conninfo, doing) from None
