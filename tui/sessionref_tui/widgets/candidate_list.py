"""The title rows of the `@` picker: a list drawn through Textual's line API that never takes focus.

A new result set only stores each candidate's fields; rows are laid out when they first come into
view and kept as strips, and moving the highlight repaints two lines (see `CandidateList`). The
"said in conversation" group draws its rows with the same class (`said_group.SaidList`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Final

from rich.segment import Segment
from textual import events
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from sessionref_tui.widgets.candidate_rows import (
    FieldWidths,
    Piece,
    RowColumns,
    RowFields,
    columns_for,
    row_pieces,
)

MAX_VISIBLE_ROWS: Final = 8
"""Rows visible at once; more scroll, with a position indicator such as "3/17"."""


class CandidateList(ScrollView, can_focus=False):
    """The candidate rows, drawn through Textual's line API; never takes focus.

    `show_rows` replaces the rows without laying any out; `render_line` lays a
    row out the first time it is drawn at the current width and caches the
    strip. The highlight is a style put over the cached strip, so moving it
    only repaints two lines. A subclass with another row layout overrides
    `_columns_changed`, `_width_changed` and `_row_pieces` (see `said_group.SaidList`).
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
        """The row at `index` of `rows` was clicked."""

        def __init__(self, index: int, rows: CandidateList) -> None:
            super().__init__()
            self.index = index
            self.rows = rows

        @property
        def control(self) -> CandidateList:
            """The list that was clicked."""
            return self.rows

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._rows: list[Any] = []
        """The rows' fields (`RowFields` here; a subclass's own kind in a subclass)."""
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
        self._query = query
        self._replace_rows(rows, highlight_first=True)

    def _replace_rows(self, rows: Sequence[Any], *, highlight_first: bool) -> None:
        """Store `rows` without laying any out, drop the cached strips and scroll to the top."""
        self._rows = list(rows)
        self._columns_changed()
        self._strips.clear()
        self._strips_width = -1
        self._highlighted = 0 if highlight_first and self._rows else None
        # A layout pass is needed only when the number of rows changes.
        self.virtual_size = Size(0, len(self._rows))
        self.scroll_to(y=0, animate=False, force=True)
        self.refresh()

    def _columns_changed(self) -> None:
        """New rows: measure what every row's layout shares, whatever the width."""
        self._columns = columns_for(self._rows)

    def _width_changed(self, width: int) -> None:
        """The list is `width` cells wide now (or has new rows): share the width between the fields."""
        self._field_widths = FieldWidths.of(self._columns, width)

    def _row_pieces(self, index: int, width: int) -> tuple[list[Piece], int]:
        """Row `index` laid out at `width` (after `_width_changed(width)`): its pieces and cells."""
        return row_pieces(self._rows[index], self._query, width, self._field_widths)

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
            self._width_changed(width)
        strip = self._strips.get(index)
        if strip is None:
            pieces, cells = self._row_pieces(index, width)
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
            self.post_message(self.Clicked(index, self))
