"""The values of the UI policy a `Workspace` carries out (see `workspace`), shared by both UIs.

A session that exists only once its first message is sent (`DraftSession`), the named size of
every list of sessions (`CandidateLimits`), and sent messages that wait in an inbox
(`QueuedMessage`) or come back as drafts (`ReturnedDraft`, `merge_returned_drafts`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class DraftSession:
    """A session that does not exist yet: it is created on disk by its first sent message.

    It stands in for an agent wherever one is needed before that (``id`` excludes it from its own
    candidates and makes a mention of it a self reference; ``cwd`` ranks candidates).
    """

    id: str
    cwd: str | None


@dataclass(frozen=True, slots=True)
class Vantage:
    """Where a list of sessions is seen from when no session is: ``cwd`` ranks first, ``id`` ("")
    leaves nothing out."""

    id: str
    cwd: str | None


@dataclass(frozen=True, slots=True)
class CandidateLimits:
    """How many sessions each list in the UIs asks for (`Workspace.candidates`).

    A list is ranked before it is cut (this folder first, then the most recently active), so a
    limit decides how far down a list reaches, never which sessions come first.
    """

    mention: int | None = None
    """The `@` menus of both UIs. None: the ``[references] candidateLimit`` setting (default 50), the
    contract's own size for ``list_candidates``: both menus show 8 rows at a time and scroll, and a
    query of two or three letters puts the session wanted well inside 50, while one indexed
    lookup of 50 takes 0.2 ms (median) at 100,000 sessions (``bench/bench_discovery.py``)."""

    session_list: int = 20
    """``/sessions`` (and the sessions ``/switch`` chooses among by title): rows printed into the
    terminal's scrollback, so they fit one 24-line screen with the command above them; a query narrows
    the list rather than scrolling it."""

    sidebar: int = 200
    """The app's sidebar, rebuilt from the index on every switch and title change: 200 two-line rows
    are more than anyone scrolls through and keep each rebuild to a few milliseconds at 100,000
    sessions; past it the sidebar says that the switcher (Ctrl+O) searches them all."""

    switcher: int = 30
    """The app's session switcher (Ctrl+O), asked again on every keystroke: 30 ranked hits are about
    two screens of the palette, enough to scroll while typing narrows them."""

    said: int = 20
    """The "said in conversation" group of both `@` menus (`MentionSource.conversations`): the
    search ranks up to 1,000 matching messages per keystroke but builds a snippet for each session
    it returns, so it returns a first screen, not a ranking of every match; 20 sessions are five
    screens of the app's group (4 rows) and more than the line mode's menu shows at once."""


@dataclass(frozen=True, slots=True)
class QueuedMessage:
    """A sent message still waiting in its session's inbox: the model has not seen it yet.

    ``draft`` is the text as typed (canonical mention tokens included), ``text`` the readable text
    the model will receive, ``references`` the labels of the sessions it mentions.
    """

    message_id: str
    draft: str
    text: str
    references: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ReturnedDraft:
    """A sent message that will never reach the model, handed back as the draft it was typed as.

    ``reason`` is the agent's discard reason: ``cancelled`` (the reply was stopped before the
    message was taken), ``rejected``, ``dropped``, ``error`` or ``removed``.
    """

    session_id: str
    draft: str
    reason: str


QueueListener = Callable[[str], object]
"""``listener(session_id)``: the queued messages of that session changed."""

DraftsListener = Callable[[str, Sequence[ReturnedDraft]], object]
"""``listener(session_id, drafts)``: these sent messages came back as drafts, in send order."""


def merge_returned_drafts(drafts: Sequence[str], current: str) -> str:
    """The composer text after `drafts` come back: them in send order, then what was being typed.

    Parts are separated by a blank line; empty parts are left out, so nothing typed is lost and
    nothing is doubled.
    """
    parts = [draft for draft in drafts if draft.strip()]
    if current.strip():
        parts.append(current)
    return "\n\n".join(parts)
