"""The picker's second group, "said in conversation": sessions found by what was said in them.

It sits under the title candidates (which stay first and unchanged). A heading row that is never
selectable names the group and says how the search went ("indexing 40%…", "type 3 letters…");
the rows are drawn like the title rows (`SaidList` is a `CandidateList` laid out by `said_rows`).
While a new key's answer is on its way the group is *held*: its rows keep their room but are
drawn blank and cannot be highlighted, so the popup does not jump on every key and a stale group
is never shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.strip import Strip
from textual.widgets import Static

from sessionref_tui.display import inert
from sessionref_tui.widgets.candidate_list import CandidateList
from sessionref_tui.widgets.candidate_rows import Piece
from sessionref_tui.widgets.said_rows import (
    MatchLike,
    SaidRowFields,
    label_cells,
    mark_cells,
    said_row_pieces,
)

SAID_HEADING: Final = "said in conversation"
"""The group's name, on its heading row."""

SAID_ROWS_VISIBLE: Final = 4
"""Rows of the group visible at once (more scroll): with the 8 title rows above, the picker still
fits a 30-row terminal, and four snippets are enough to recognise the session wanted."""

SEARCHING: Final = "searching…"
NOTHING_SAID: Final = "nothing said matches"


class SaidList(CandidateList):
    """The group's rows: the title list's line API, highlight and clicks, with `said_rows`' layout."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._label_width = 0
        self._mark_width = 0
        self.held = False
        """While True the rows keep their room but are drawn blank (a new answer is on its way)."""

    def show_said(self, rows: Sequence[SaidRowFields]) -> None:
        """Replace the rows; nothing is highlighted (the popup decides) and the list is not held."""
        self.held = False
        self._replace_rows(rows, highlight_first=False)

    def hold(self) -> None:
        """Keep the rows' room, draw them blank and let nothing be highlighted."""
        self.held = True
        self.highlighted = None
        self.refresh()

    def _columns_changed(self) -> None:
        self._mark_width = mark_cells(self._rows)

    def _width_changed(self, width: int) -> None:
        self._label_width = label_cells(self._rows, width)

    def _row_pieces(self, index: int, width: int) -> tuple[list[Piece], int]:
        return said_row_pieces(self._rows[index], width, self._label_width, self._mark_width)

    def render_line(self, y: int) -> Strip:
        """Line `y`: blank while held, else a cached row as in the title list."""
        if self.held:
            return Strip.blank(self.scrollable_content_region.width, self.get_visual_style().rich_style)
        return super().render_line(y)


class SaidGroup(Vertical):
    """The heading and the rows of the "said in conversation" group (hidden until a query asks)."""

    DEFAULT_CSS = """
    SaidGroup {
        height: auto;
        & > #said-heading { height: 1; }
        & > SaidList { height: auto; max-height: 4; scrollbar-size-vertical: 0; }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.matches: list[MatchLike] = []
        self._heading: Text | None = None
        self.display = False

    def compose(self) -> ComposeResult:
        yield Static("", id="said-heading", markup=False)
        yield SaidList(id="said-options")

    @property
    def rows(self) -> SaidList:
        """The list of match rows."""
        return self.query_one(SaidList)

    @property
    def selectable(self) -> int:
        """How many rows may be highlighted now (none while held)."""
        return 0 if self.rows.held or not self.display else len(self.matches)

    def show(self, matches: Sequence[MatchLike], now_ms: float, note: str | None) -> None:
        """Show `matches` (already inert-ready data) with `note` on the heading (why there are none)."""
        self.matches = list(matches)
        self.rows.show_said([SaidRowFields.of(match, now_ms) for match in self.matches])
        if not self.matches and note is None:
            note = NOTHING_SAID
        self._set_heading(note)
        self.display = True

    def hold(self) -> None:
        """A new key is being searched: keep the group's room, show nothing of the old answer."""
        if not self.display:
            return
        self.rows.hold()
        self._set_heading(SEARCHING)

    def hide(self) -> None:
        """No group for this query (nothing typed after `@`, or no conversation search here)."""
        self.matches = []
        self.rows.show_said(())
        self.display = False

    def _set_heading(self, note: str | None) -> None:
        heading = Text(end="", no_wrap=True, overflow="ellipsis")
        heading.append(SAID_HEADING, style="bold dim")
        if note:
            heading.append("  ")
            heading.append(inert(note), style="dim italic")
        if heading != self._heading:
            self._heading = heading
            self.query_one("#said-heading", Static).update(heading, layout=False)
