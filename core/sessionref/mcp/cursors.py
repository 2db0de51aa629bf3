"""Pagination cursors: opaque, bound to the listing they came from, refused anywhere else.

A cursor carries the offset of the next page and a digest of the listing it belongs to (which
method, which query, which folder), signed with a key made when the server starts. So a cursor
is valid only for the same listing of the same server process: one from `resources/list` given to
`list_sessions`, one for another query, an edited one or one from an earlier run is
`MCP_INVALID_CURSOR`, never a wrong page. Offsets are taken against the ranking at the time of
each page: sessions that became active meanwhile may shift a row (as any live listing does).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from typing import Final

from sessionref.mcp.errors import MCP_INVALID_CURSOR, McpError

CURSOR_MAX_CHARS: Final = 200
_DIGEST_BYTES: Final = 12


class CursorSigner:
    """Makes and checks the cursors of one server process (its key is random, made once)."""

    def __init__(self, key: bytes | None = None) -> None:
        self._key = key if key is not None else secrets.token_bytes(32)

    def _mac(self, body: bytes) -> bytes:
        return hmac.new(self._key, body, hashlib.sha256).digest()[:_DIGEST_BYTES]

    def make(self, listing: tuple[str, ...], offset: int) -> str:
        """The cursor of the page starting at `offset` of `listing` (any tuple naming a listing)."""
        body = json.dumps([_listing_digest(listing), offset]).encode()
        return base64.urlsafe_b64encode(self._mac(body) + body).decode().rstrip("=")

    def offset(self, cursor: str | None, listing: tuple[str, ...]) -> int:
        """The offset `cursor` points at in `listing` (0 for no cursor); `MCP_INVALID_CURSOR` else."""
        if cursor is None or cursor == "":
            return 0
        try:
            if len(cursor) > CURSOR_MAX_CHARS:
                raise ValueError("too long")
            raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
            mac, body = raw[:_DIGEST_BYTES], raw[_DIGEST_BYTES:]
            if not hmac.compare_digest(mac, self._mac(body)):
                raise ValueError("not signed here")
            digest, offset = json.loads(body)
        except (ValueError, TypeError) as error:
            raise _invalid() from error
        if digest != _listing_digest(listing) or type(offset) is not int or offset < 0:
            raise _invalid()
        return offset


def _listing_digest(listing: tuple[str, ...]) -> str:
    return hashlib.sha256(json.dumps(listing).encode()).hexdigest()[:16]


def _invalid() -> McpError:
    return McpError(
        MCP_INVALID_CURSOR,
        "this cursor was not given out for this listing by this server: start the listing again without it",
    )
