"""Turning what a user typed into a session id: the exact id, or a unique prefix of one.

Every host resolves ids the same way (the CLI's ``show``/``mention``/``prepare --session``/
``repl --session``, the line mode's ``/switch``, the app): an exact id always wins, even when it
is also the prefix of longer ids; otherwise the one id that starts with the text; several such ids
are ``SESSION_ID_AMBIGUOUS`` listing a few of them; none is ``STORE_SESSION_NOT_FOUND``.
`resolve_session_text` also takes what an agent may hold instead of an id: a ``dsh-session:`` URI
or a whole ``@[label](dsh-session:…)`` mention token (the MCP server's ``session`` arguments).
Only the public :class:`~sessionref.service.protocols.SessionQuery` API is used (``list_sessions``), so any
backend works and nothing here reads a log.
"""

from __future__ import annotations

from typing import Final, Protocol, runtime_checkable

from sessionref.contract.errors import CodedError, ErrorCode, SessionReferenceError
from sessionref.contract.excerpts import bounded_excerpt
from sessionref.contract.uri import (
    SESSION_REFERENCE_SCHEME,
    decode_session_reference_uri,
    find_mention_spans,
)
from sessionref.service.errors import ServiceCode
from sessionref.service.protocols import SessionQuery

SESSION_ID_AMBIGUOUS: Final = ServiceCode.SESSION_ID_AMBIGUOUS
STORE_SESSION_NOT_FOUND: Final = ServiceCode.SESSION_NOT_FOUND  # the store's own not-found code

AMBIGUOUS_MATCHES_SHOWN: Final = 5
"""How many of the matching ids an ambiguity error lists (the most recent first)."""

ID_EXCERPT_CHARS: Final = 80
"""Characters of one id (or of the typed prefix) quoted in an error message."""


@runtime_checkable
class ExplainsMissingSessions(Protocol):
    """A backend that can say why an id it does not list is missing (e.g. its folder is unreadable)."""

    def missing_session_problem(self, session_id: str) -> CodedError | None:
        """The error to report instead of "not found" for `session_id`, or None when it is simply absent."""
        ...


class SessionIdError(CodedError):
    """The text names no session (``STORE_SESSION_NOT_FOUND``) or several (``SESSION_ID_AMBIGUOUS``)."""


async def resolve_session_id(sessions: SessionQuery, text: str) -> str:
    """The id of the one session ``text`` names: the exact id, else the only id starting with it.

    Raises :class:`SessionIdError`: ``SESSION_ID_AMBIGUOUS`` (listing up to
    :data:`AMBIGUOUS_MATCHES_SHOWN` matches, most recent first) or ``STORE_SESSION_NOT_FOUND``
    (also for empty text).
    """
    ids = [record.id for record in await sessions.list_sessions()]
    if text in ids:
        return text
    matches = [session_id for session_id in ids if text and session_id.startswith(text)]
    if len(matches) == 1:
        return matches[0]
    quoted = _quote(text)
    if not matches:
        problem = (
            sessions.missing_session_problem(text) if isinstance(sessions, ExplainsMissingSessions) else None
        )
        if problem is not None:
            raise problem
        message = f"session {quoted} not found (no id is or starts with it)"
        raise SessionIdError(STORE_SESSION_NOT_FOUND, message)
    shown = ", ".join(_quote(session_id) for session_id in matches[:AMBIGUOUS_MATCHES_SHOWN])
    more = len(matches) - AMBIGUOUS_MATCHES_SHOWN
    rest = f" and {more} more" if more > 0 else ""
    raise SessionIdError(
        SESSION_ID_AMBIGUOUS,
        f"{quoted} is the start of {len(matches)} session ids: {shown}{rest}; type more of the id",
    )


def session_id_in_text(text: str) -> str:
    """The id `text` names without looking anything up: the id inside a canonical ``dsh-session:``
    URI or inside a text that is exactly one ``@[label](dsh-session:…)`` token; else `text` itself
    (an id or an id prefix). A malformed URI or token is ``SESSION_REFERENCE_INVALID_REFERENCE``."""
    stripped = text.strip()
    if stripped.startswith(SESSION_REFERENCE_SCHEME):
        return decode_session_reference_uri(stripped)
    if stripped.startswith("@["):
        spans = find_mention_spans(stripped)
        whole = len(spans) == 1 and spans[0].start == 0 and spans[0].end == len(stripped)
        if not whole or spans[0].kind != "mention":
            raise SessionReferenceError(
                ErrorCode.INVALID_REFERENCE, f"{_quote(stripped)} is not one @[label](dsh-session:…) mention"
            )
        if spans[0].session_id is None:
            raise spans[0].error or SessionReferenceError(ErrorCode.INVALID_REFERENCE, "invalid mention")
        return spans[0].session_id
    return text


async def resolve_session_text(sessions: SessionQuery, text: str) -> str:
    """The id of the one session `text` names: an id or unique id prefix (`resolve_session_id`), a
    canonical ``dsh-session:`` URI, or a text that is exactly one ``@[label](dsh-session:…)`` token.

    A malformed URI or token is ``SESSION_REFERENCE_INVALID_REFERENCE``; else as `resolve_session_id`.
    """
    return await resolve_session_id(sessions, session_id_in_text(text))


def _quote(text: str) -> str:
    return '"' + bounded_excerpt(text, ID_EXCERPT_CHARS) + '"'
