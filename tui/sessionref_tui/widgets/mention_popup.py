"""The `@` picker: an overlay above the composer listing candidate sessions.

The popup is a thin view. The composer decides when it opens, what query runs
and which results are current; the popup shows rows, moves the highlight (with
wrap-around), reports the highlighted candidate and posts `Picked` on a click.
Every field shown comes from data and is rendered inert (see `candidate_rows`).

Two groups: the title candidates first, then "said in conversation" (`said_group`),
sessions found by what was said in them. The highlight moves across both as one
list (the group's heading is not a row); the "n/m" status counts the rows of both.

It is built for a keystroke to cost little at any store size: a new result set
only stores each candidate's fields, rows are laid out when they first come into
view (at most `MAX_VISIBLE_ROWS` per result set) and kept as strips, and the
status line repaints without a layout pass.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from rich.style import Style
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Static

from sessionref_tui.display import inert
from sessionref_tui.widgets.candidate_list import MAX_VISIBLE_ROWS, CandidateList
from sessionref_tui.widgets.candidate_rows import CandidateLike, RemoteSessions, RowFields
from sessionref_tui.widgets.reference_preview import ReferencePreview
from sessionref_tui.widgets.said_group import SaidGroup
from sessionref_tui.widgets.said_rows import MatchLike

Pickable = CandidateLike | MatchLike
"""A row the popup offers: a title candidate or a conversation match (both name a session)."""

__all__ = ["MAX_VISIBLE_ROWS", "NO_MATCH", "NO_SESSIONS_YET", "CandidateList", "MentionPopup"]

_DIM: Final = Style(dim=True)

NO_SESSIONS_YET: Final = "No other sessions yet — one is listed here once its first message is sent."
"""What a bare `@` says when there is nothing else to mention (not "no matching sessions")."""

NO_MATCH: Final = "no matching sessions"


def _no_machine(session_id: str) -> str | None:
    return None


class MentionPopup(Vertical):
    """Overlay listing candidates for the current `@` query, with a status line and a preview."""

    class Picked(Message):
        """A candidate was clicked."""

        def __init__(self, candidate: Pickable) -> None:
            super().__init__()
            self.candidate = candidate

    def __init__(self, *, now_ms: Callable[[], float], id: str | None = None) -> None:
        super().__init__(id=id)
        self._now_ms = now_ms
        self._candidates: list[CandidateLike] = []
        self._status: Text | None = None
        self.query_text = ""
        """The query the rows on screen belong to."""
        self.rehearsing = False
        """True while `rehearse` shows the popup in a frame the app does not write to the terminal."""
        self.remote: RemoteSessions | None = None
        """Marks remote rows with their machine and gives the catalog's note (None: no catalog)."""
        self._note: str | None = None

    def compose(self) -> ComposeResult:
        yield CandidateList(id="mention-options")
        yield SaidGroup(id="said-group")
        yield Static("", id="mention-status", markup=False)
        yield ReferencePreview(id="mention-preview")

    @property
    def candidate_list(self) -> CandidateList:
        """The list widget holding the title rows."""
        return self.query_one("#mention-options", CandidateList)

    @property
    def said_group(self) -> SaidGroup:
        """The "said in conversation" group under the title rows."""
        return self.query_one(SaidGroup)

    @property
    def preview(self) -> ReferencePreview:
        """The preview pane for the highlighted candidate."""
        return self.query_one(ReferencePreview)

    @property
    def is_open(self) -> bool:
        """True while the popup is shown to the user (not while it is rehearsed)."""
        return self.display and not self.rehearsing

    @property
    def candidates(self) -> Sequence[CandidateLike]:
        """The title candidates currently listed."""
        return tuple(self._candidates)

    @property
    def said(self) -> Sequence[MatchLike]:
        """The conversation matches currently listed (none while a new answer is on its way)."""
        return tuple(self.said_group.matches) if self.said_group.selectable else ()

    @property
    def highlighted_candidate(self) -> Pickable | None:
        """The candidate (or conversation match) under the highlight, or None when nothing is."""
        index = self._highlight_index()
        if index is None:
            return None
        if index < len(self._candidates):
            return self._candidates[index]
        return self.said_group.matches[index - len(self._candidates)]

    def rehearse(self, candidates: Sequence[CandidateLike]) -> None:
        """Open on `candidates` for a bare `@` without it being seen, until `end_rehearsal`.

        The first time the popup is shown, Textual sizes its widgets (which asks for a second
        layout pass right after), and the compositor cuts every line under it at its edges for
        the first time: a few milliseconds more than any later open, on the keystroke's path.
        The app calls this once its first session is drawn and does not write the frames drawn
        meanwhile to the terminal (see `SessionrefApp.rehearse_picker`). While rehearsed, the
        popup is not `is_open`: keys go to the composer, and a click picks nothing.
        """
        self._fill("", candidates)
        self.rehearsing = True

    def end_rehearsal(self) -> None:
        """Close the rehearsed popup (its widgets keep their sizes for the first real open)."""
        if self.rehearsing:
            self.rehearsing = False
            self.close()

    def open(self) -> None:
        """Show the popup."""
        # `display` rather than a CSS class: a class change re-matches the stylesheet for the
        # popup and every widget in it, which cost more than drawing the popup.
        self.display = True

    def close(self) -> None:
        """Hide the popup and forget its rows and preview."""
        self.display = False
        self.remove_class("-loading")
        self._candidates = []
        self._note = None
        self.query_text = ""
        self.candidate_list.show_rows((), "")
        self.said_group.hide()
        self._set_status(Text(""))
        self.preview.reset()

    def show_results(self, query: str, candidates: Sequence[CandidateLike]) -> None:
        """Replace the title rows with `candidates` for `query` and highlight the first one.

        Costs one pass over the candidates' fields; rows are laid out only as
        they are drawn, so the list size does not matter to a keystroke. The
        second group is held until its own answer for `query` arrives.
        """
        self.rehearsing = False
        self._fill(query, candidates)

    def _fill(self, query: str, candidates: Sequence[CandidateLike]) -> None:
        self._candidates = list(candidates)
        self.query_text = query
        now = self._now_ms()
        remote = self.remote
        machine_of = remote.machine_of if remote is not None else _no_machine
        self._note = remote.catalog_note() if remote is not None else None
        self.candidate_list.show_rows(
            [
                RowFields.of(candidate, now, machine=machine_of(candidate.session_id))
                for candidate in self._candidates
            ],
            query,
        )
        self.said_group.hold()
        self.remove_class("-loading")
        self._highlight_changed()
        if not self._candidates and not self.said_group.display:
            self.preview.reset()  # (with a group on screen, its answer decides: see show_conversations)
        self.open()

    def show_conversations(
        self, query: str, matches: Sequence[MatchLike] | None, note: str | None = None
    ) -> None:
        """The second group's answer for `query`: `matches` (with `note` saying why there are none),
        or None for no group at all. Never moves a highlight the user put on a title row."""
        if query != self.query_text:
            return  # an answer for rows no longer shown
        if matches is None:
            self.said_group.hide()
        else:
            self.said_group.show(matches, self._now_ms(), note)
        if self._highlight_index() is None and self.said_group.selectable:
            self.said_group.rows.highlighted = 0
            self._highlight_changed()
        else:
            self._update_status()
        if self._highlight_index() is None:
            self.preview.reset()

    def show_loading(self) -> None:
        """Say a lookup is running (the composer calls this only after a delay)."""
        self.add_class("-loading")
        self._update_status()
        self.open()

    def show_error(self, message: str) -> None:
        """Show a lookup failure as a quiet status row; the title rows are cleared."""
        self._candidates = []
        self.candidate_list.show_rows((), "")
        self.said_group.hold()
        self.preview.reset()
        self.remove_class("-loading")
        self._set_status(Text(inert(message), style="italic"))
        self.open()

    def _selectable(self) -> int:
        return len(self._candidates) + self.said_group.selectable

    def _highlight_index(self) -> int | None:
        """The highlighted row across both groups (titles first), or None."""
        title = self.candidate_list.highlighted
        if title is not None:
            return title
        said = self.said_group.rows.highlighted
        if said is not None and self.said_group.selectable:
            return len(self._candidates) + said
        return None

    def _set_highlight(self, index: int) -> None:
        titles = len(self._candidates)
        if index < titles:
            self.said_group.rows.highlighted = None
            self.candidate_list.highlighted = index
        else:
            self.candidate_list.highlighted = None
            self.said_group.rows.highlighted = index - titles

    def move_highlight(self, delta: int) -> None:
        """Move the highlight by `delta` rows across both groups, wrapping past either end."""
        count = self._selectable()
        if not count:
            return
        current = self._highlight_index()
        self._set_highlight(0 if current is None else (current + delta) % count)
        self._highlight_changed()

    def _highlight_changed(self) -> None:
        self._update_status()
        candidate = self.highlighted_candidate
        if candidate is not None:
            self.preview.show_for(candidate)

    def _set_status(self, status: Text) -> None:
        # The status line is always one row high: repaint it without a layout pass.
        if self._status is not None and status == self._status:
            return
        self._status = status
        self.query_one("#mention-status", Static).update(status, layout=False)

    def _update_status(self) -> None:
        status = Text(end="", no_wrap=True)
        count = self._selectable()
        if self.has_class("-loading"):
            status.append("searching…", style="italic")
        elif not count:
            status.append(NO_MATCH if self.query_text else NO_SESSIONS_YET, style="italic")
        else:
            index = (self._highlight_index() or 0) + 1
            status.append(f"{index}/{count}", style="bold")
            if self._note is None:
                status.append("  ↑↓ move · Tab/Enter pick · Esc close", style=_DIM)
        if self._note is not None and not self.has_class("-loading"):
            status.append(f"  {inert(self._note)}", style="italic")
        self._set_status(status)

    @on(CandidateList.Clicked)
    def _clicked(self, event: CandidateList.Clicked) -> None:
        event.stop()
        if self.rehearsing:
            return
        if event.rows is not self.candidate_list and not self.said_group.selectable:
            return  # a held group's blank rows
        if event.rows is self.candidate_list:
            self.said_group.rows.highlighted = None
        else:
            self.candidate_list.highlighted = None
        self._highlight_changed()
        candidate = self.highlighted_candidate
        if candidate is not None:
            self.post_message(self.Picked(candidate))
