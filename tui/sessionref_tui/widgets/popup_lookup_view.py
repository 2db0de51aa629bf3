"""How the composer's `@` picker shows what the lookup controller decides (`lookup.LookupView`).

Both groups of the popup: the title candidates (`show_results`, `show_failure`) and "said in
conversation" (`show_conversations`, `show_conversation_failure`), which has no group at all for a
bare `@` or a workspace without conversation search.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from sessionref.contract.errors import describe_error

from sessionref_tui.lookup import LookupKey
from sessionref_tui.widgets.candidate_rows import CandidateLike
from sessionref_tui.widgets.mention_popup import MentionPopup

if TYPE_CHECKING:
    from sessionref.service.conversations import ConversationSearchResult


class HasPopup(Protocol):
    """The composer, as the view sees it."""

    @property
    def popup(self) -> MentionPopup: ...


class PopupLookupView:
    """Renders the lookup controller's decisions in the composer's popup."""

    def __init__(self, composer: HasPopup) -> None:
        self._composer = composer

    def lookup_started(self, key: LookupKey) -> None:
        """A new query: the highlighted row's preview waits until its rows are current."""
        self._composer.popup.preview.pause()

    def show_loading(self, key: LookupKey) -> None:
        """The lookup is slow: the popup says "searching…"."""
        self._composer.popup.show_loading()

    def show_results(self, key: LookupKey, candidates: Sequence[CandidateLike]) -> None:
        """Replace the rows in one step (the previous ones stayed on screen meanwhile)."""
        self._composer.popup.show_results(key.query, candidates)

    def show_failure(self, key: LookupKey, error: Exception) -> None:
        """A quiet row saying why there are no sessions to show."""
        _code, message = describe_error(error)
        self._composer.popup.show_error(f"sessions unavailable: {message}")

    def show_conversations(self, key: LookupKey, found: ConversationSearchResult | None) -> None:
        """The "said in conversation" group: its matches, or why there are none; no group for a
        bare `@` or without conversation search."""
        popup = self._composer.popup
        if found is None or found.status in ("empty", "off"):
            popup.show_conversations(key.query, None)
        else:
            popup.show_conversations(key.query, found.matches, found.note)

    def show_conversation_failure(self, key: LookupKey, error: Exception) -> None:
        """The group says why it has nothing; the title rows stay."""
        _code, message = describe_error(error)
        self._composer.popup.show_conversations(key.query, (), f"unavailable: {message}")

    def hide(self) -> None:
        """Close the popup (if it is open)."""
        popup = self._composer.popup
        if popup.is_open:
            popup.close()
