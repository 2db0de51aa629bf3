"""Sent messages that came back as drafts: what the app says about them and where it keeps them.

The workspace hands back every queued message that will never reach the model (the reply was
stopped with Esc, or the turn failed or dropped it), through its `on_drafts_returned` listeners:
the only way either UI learns of it. The policy, the same in both UIs: such a message goes back
into the composer (the line mode's prompt), after any other returned draft and before what is
being typed (`merge_returned_drafts`). If its session is not on screen, it is kept as that
session's draft (`KeptDrafts`, used by both) and put back when the user opens the session again.
Pure and toolkit-free.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sessionref.host.workspace import ReturnedDraft


def _messages(count: int, adjective: str = "") -> str:
    noun = "message" if count == 1 else "messages"
    return f"{count} {adjective + ' ' if adjective else ''}{noun}"


def _reasons(drafts: Sequence[ReturnedDraft]) -> str:
    reasons = sorted({draft.reason for draft in drafts if draft.reason != "cancelled"})
    return ", ".join(reasons)


def returned_notice(drafts: Sequence[ReturnedDraft]) -> str:
    """What to tell the user when `drafts` are put back into the composer on screen.

    "2 queued messages are back in the composer." after Esc; a message the agent dropped for another
    reason says so: "1 message was not delivered (error) and is back in the composer."
    """
    count = len(drafts)
    verb = "is" if count == 1 else "are"
    reasons = _reasons(drafts)
    if not reasons:
        return f"{_messages(count, 'queued')} {verb} back in the composer."
    was = "was" if count == 1 else "were"
    return f"{_messages(count)} {was} not delivered ({reasons}) and {verb} back in the composer."


def kept_notice(drafts: Sequence[ReturnedDraft], session_name: str) -> str:
    """What to tell the user when `drafts` of a session that is not on screen are kept for it."""
    count = len(drafts)
    was = "was" if count == 1 else "were"
    reasons = _reasons(drafts)
    why = f" ({reasons})" if reasons else ""
    return (
        f"{_messages(count)} to “{session_name}” {was} not delivered{why}: kept as that session's draft, "
        "back in the composer when you open it."
    )


def restored_notice(drafts: Sequence[ReturnedDraft]) -> str:
    """What to tell the user when kept drafts come back as their session is opened."""
    count = len(drafts)
    verb = "is" if count == 1 else "are"
    return f"{_messages(count, 'unsent')} {verb} back in the composer."


class KeptDrafts:
    """Returned drafts of sessions that are not on screen, per session, in the order they came back."""

    def __init__(self) -> None:
        self._by_session: dict[str, list[ReturnedDraft]] = {}

    def keep(self, session_id: str, drafts: Sequence[ReturnedDraft]) -> None:
        """Keep `drafts` for `session_id` (after any kept before)."""
        self._by_session.setdefault(session_id, []).extend(drafts)

    def take(self, session_id: str) -> list[ReturnedDraft]:
        """Hand back and forget what is kept for `session_id` (empty when nothing is)."""
        return self._by_session.pop(session_id, [])

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._by_session
