"""The service layer's stable error codes (every code of every layer: docs/errors.md)."""

from __future__ import annotations

from enum import StrEnum


class ServiceCode(StrEnum):
    """Codes the service layer defines; the store raises `SESSION_NOT_FOUND` too (it sits above)."""

    SESSION_NOT_FOUND = "STORE_SESSION_NOT_FOUND"
    """No session has this id (or, when resolving typed text, none starts with it)."""
    SESSION_ID_AMBIGUOUS = "SESSION_ID_AMBIGUOUS"
    """The typed text is the start of several session ids and the exact id of none."""
