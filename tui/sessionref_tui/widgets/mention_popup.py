"""The `@` picker: an overlay above the composer listing candidate sessions.

The popup is a thin view. The composer decides when it opens, what query runs
and which results are current; the popup shows rows, moves the highlight (with
wrap-around), reports the highlighted candidate and posts `Picked` on a click.
Every field shown comes from data and is rendered inert (see `candidate_rows`).

It is built for a keystroke to cost little at any store size: a new result set
only stores each candidate's fields, rows are laid out when they first come into
view (at most `MAX_VISIBLE_ROWS` per result set) and kept as strips, and the
status line repaints without a layout pass.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Final

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Static

from sessionref_tui.display import inert
from sessionref_tui.widgets.candidate_rows import FieldWidths, RowColumns, RowFields, columns_for, row_pieces
from sessionref_tui.widgets.reference_preview import ReferencePreview

MAX_VISIBLE_ROWS: Final = 8
"""Rows visible at once; more scroll, with a position indicator such as "3/17"."""

_DIM: Final = Style(dim=True)

NO_SESSIONS_YET: Final = "No other sessions yet — one is listed here once its first message is sent."
"""What a bare `@` says when there is nothing else to mention (not "no matching sessions")."""

NO_MATCH: Final = "no matching sessions"


class CandidateList(ScrollView, can_focus=False):
    """The candidate rows, drawn through Textual's line API; never takes focus.

    `show_rows` replaces the rows without laying any out; `render_line` lays a
    row out the first time it is drawn at the current width and caches the
    strip. The highlight is a style put over the cached strip, so moving it
    only repaints two lines.
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {"candidate-list--highlighted"}

    DEFAULT_CSS = """
    CandidateList {
        width: 1fr;
        height: auto;
        overflow-x: hidden;
        & > .candidate-list--highlighted {
            color: $foreground;
            background: $block-cursor-blurred-background;
            text-style: $block-cursor-blurred-text-style;
        }
    }
    """

    class Clicked(Message):
        """The row at `index` was clicked."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._rows: list[RowFields] = []
        self._query = ""
        self._columns = RowColumns(0, 0, 0, 0)
        self._highlighted: int | None = None
        self._strips: dict[int, Strip] = {}
        self._strips_width = -1
        self._field_widths = FieldWidths.of(self._columns, 0)

    @property
    def row_count(self) -> int:
        """How many rows the list holds (visible or not)."""
        return len(self._rows)

    @property
    def highlighted(self) -> int | None:
        """The index of the highlighted row; None when the list is empty."""
        return self._highlighted

    @highlighted.setter
    def highlighted(self, index: int | None) -> None:
        if index is not None:
            index = min(max(index, 0), len(self._rows) - 1) if self._rows else None
        previous = self._highlighted
        if index == previous:
            return
        self._highlighted = index
        for row in (previous, index):
            if row is not None:
                self.refresh_line(row)
        self._scroll_to_highlight()

    def show_rows(self, rows: Sequence[RowFields], query: str) -> None:
        """Replace the rows (matches of `query` are emphasised) and highlight the first."""
        self._rows = list(rows)
        self._query = query
        self._columns = columns_for(self._rows)
        self._strips.clear()
        self._strips_width = -1
        self._highlighted = 0 if self._rows else None
        # A layout pass is needed only when the number of rows changes.
        self.virtual_size = Size(0, len(self._rows))
        self.scroll_to(y=0, animate=False, force=True)
        self.refresh()

    def _scroll_to_highlight(self) -> None:
        index = self._highlighted
        if index is None:
            return
        window = self.scrollable_content_region.height or min(len(self._rows), MAX_VISIBLE_ROWS)
        top = round(self.scroll_y)
        if index < top:
            self.scroll_to(y=index, animate=False, force=True)
        elif index >= top + window:
            self.scroll_to(y=index - window + 1, animate=False, force=True)

    def notify_style_update(self) -> None:
        """Styles changed (theme, classes): the cached rows stay valid, the lines repaint."""
        super().notify_style_update()
        self.refresh()

    def _row_strip(self, index: int, width: int) -> Strip:
        if width != self._strips_width:
            self._strips.clear()
            self._strips_width = width
            self._field_widths = FieldWidths.of(self._columns, width)
        strip = self._strips.get(index)
        if strip is None:
            pieces, cells = row_pieces(self._rows[index], self._query, width, self._field_widths)
            strip = Strip([Segment(text, style) for text, style in pieces if text], cells)
            strip = strip.adjust_cell_length(width)
            self._strips[index] = strip
        return strip

    def render_line(self, y: int) -> Strip:
        """Line `y` of the visible window: a cached row, highlighted or not, or blank."""
        width = self.scrollable_content_region.width
        index = round(self.scroll_y) + y
        base = self.get_visual_style().rich_style
        if not 0 <= index < len(self._rows):
            return Strip.blank(width, base)
        if index == self._highlighted:
            style = self.get_visual_style("candidate-list--highlighted").rich_style
        else:
            style = base
        return self._row_strip(index, width).apply_style(style)

    async def _on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        index = round(self.scroll_y) + offset.y
        if 0 <= index < len(self._rows):
            self.highlighted = index
            self.post_message(self.Clicked(index))


class MentionPopup(Vertical):
    """Overlay listing candidates for the current `@` query, with a status line and a preview."""

    class Picked(Message):
        """A candidate was clicked."""

        def __init__(self, candidate: Any) -> None:
            super().__init__()
            self.candidate = candidate

    def __init__(self, *, now_ms: Callable[[], float], id: str | None = None) -> None:
        super().__init__(id=id)
        self._now_ms = now_ms
        self._candidates: list[Any] = []
        self._status: Text | None = None
        self.query_text = ""
        """The query the rows on screen belong to."""

    def compose(self) -> ComposeResult:
        yield CandidateList(id="mention-options")
        yield Static("", id="mention-status", markup=False)
        yield ReferencePreview(id="mention-preview")

    @property
    def candidate_list(self) -> CandidateList:
        """The list widget holding the rows."""
        return self.query_one("#mention-options", CandidateList)

    @property
    def preview(self) -> ReferencePreview:
        """The preview pane for the highlighted candidate."""
        return self.query_one(ReferencePreview)

    @property
    def is_open(self) -> bool:
        """True while the popup is shown."""
        return self.display

    @property
    def candidates(self) -> Sequence[Any]:
        """The candidates currently listed."""
        return tuple(self._candidates)

    @property
    def highlighted_candidate(self) -> Any | None:
        """The candidate under the highlight, or None when the list is empty."""
        index = self.candidate_list.highlighted
        if index is None or not 0 <= index < len(self._candidates):
            return None
        return self._candidates[index]

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
        self.query_text = ""
        self.candidate_list.show_rows((), "")
        self._set_status(Text(""))
        self.preview.reset()

    def show_results(self, query: str, candidates: Sequence[Any]) -> None:
        """Replace the rows with `candidates` for `query` and highlight the first one.

        Costs one pass over the candidates' fields; rows are laid out only as
        they are drawn, so the list size does not matter to a keystroke.
        """
        self._candidates = list(candidates)
        self.query_text = query
        now = self._now_ms()
        self.candidate_list.show_rows([RowFields.of(candidate, now) for candidate in self._candidates], query)
        self.set_class(not self._candidates, "-empty")
        self.remove_class("-loading")
        self._highlight_changed()
        if not self._candidates:
            self.preview.reset()
        self.open()

    def show_loading(self) -> None:
        """Say a lookup is running (the composer calls this only after a delay)."""
        self.add_class("-loading")
        self._update_status()
        self.open()

    def show_error(self, message: str) -> None:
        """Show a lookup failure as a quiet status row; the rows are cleared."""
        self._candidates = []
        self.candidate_list.show_rows((), "")
        self.preview.reset()
        self.remove_class("-loading")
        self.add_class("-empty")
        self._set_status(Text(inert(message), style="italic"))
        self.open()

    def move_highlight(self, delta: int) -> None:
        """Move the highlight by `delta` rows, wrapping past either end."""
        count = len(self._candidates)
        if not count:
            return
        current = self.candidate_list.highlighted
        self.candidate_list.highlighted = 0 if current is None else (current + delta) % count
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
        count = len(self._candidates)
        if self.has_class("-loading"):
            status.append("searching…", style="italic")
        elif not count:
            status.append(NO_MATCH if self.query_text else NO_SESSIONS_YET, style="italic")
        else:
            index = (self.candidate_list.highlighted or 0) + 1
            status.append(f"{index}/{count}", style="bold")
            status.append("  ↑↓ move · Tab/Enter pick · Esc close", style=_DIM)
        self._set_status(status)

    @on(CandidateList.Clicked)
    def _clicked(self, event: CandidateList.Clicked) -> None:
        event.stop()
        self._highlight_changed()
        candidate = self.highlighted_candidate
        if candidate is not None:
            self.post_message(self.Picked(candidate))
