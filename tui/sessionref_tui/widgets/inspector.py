"""The inspector: the current session's log events, live (seq, type, source kind, preview).

It is how a user sees the delivery order: after a send with a mention, the
`user/message` with source `session-reference` sits right next to the readable
prompt (`user`), in the same order whether the agent was idle or running.

The seq, type and source columns are as wide as their widest value; the preview
gets every cell that is left, so the text is readable in a narrow pane.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from sessionref_tui.display import inert, truncate_end
from sessionref_tui.event_view import LogRow, LogRowFolder

SOURCE_STYLES: dict[str, str] = {
    "user": "bold green",
    "session-reference": "bold magenta",
    "plugin": "yellow",
    "model": "cyan",
}
"""Colour per source kind (`plugin:<name>` takes the plugin colour) so a snapshot stands out next to
the prompt it belongs to."""

COLUMNS: Final = ("seq", "type", "source", "preview")

COLUMN_GAP: Final = 1
"""One blank cell before every column: enough to separate them, and the preview keeps the rest (the
table's own padding, two cells per column side, would take eight cells from the preview)."""

MIN_PREVIEW_CELLS: Final = 12
"""The preview keeps at least this many cells, even in a pane too narrow for everything."""

UNLAID_PREVIEW_CELLS: Final = 60
"""The preview width used before the pane has been laid out (it is fitted on the first resize)."""

NO_LOG_YET: Final = "Log · no log yet: the first message creates it"


@dataclass(frozen=True, slots=True)
class ColumnWidths:
    """The content width of each column (padding not included)."""

    seq: int
    type: int
    source: int
    preview: int


def fit_columns(rows: Sequence[LogRow], width: int) -> ColumnWidths:
    """Widths for `rows` in a table `width` cells wide: seq, type and source as wide as their widest
    value (or heading), the preview everything left (at least `MIN_PREVIEW_CELLS`)."""

    def widest(heading: str, values: Sequence[str]) -> int:
        return max([cell_len(heading), *(cell_len(inert(value)) for value in values)])

    seq = widest("seq", [row.seq for row in rows])
    kind = widest("type", [row.type for row in rows])
    source = widest("source", [row.source for row in rows])
    gaps = COLUMN_GAP * len(COLUMNS)
    preview = width - seq - kind - source - gaps if width > 0 else UNLAID_PREVIEW_CELLS
    return ColumnWidths(seq, kind, source, max(MIN_PREVIEW_CELLS, preview))


class Inspector(Vertical):
    """A live table of log rows; `reset` loads a whole log, `add_events` appends new events."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[LogRow] = []
        self.widths: ColumnWidths | None = None
        """The column widths the table is laid out with."""
        self._folder = LogRowFolder()
        self._event_count = 0
        self._skipped = 0

    def compose(self) -> ComposeResult:
        yield Static("Log", id="inspector-heading", classes="pane-heading")
        yield DataTable(id="inspector-table", cursor_type="row", zebra_stripes=True, cell_padding=0)

    @property
    def table(self) -> DataTable[Text]:
        """The table of rows."""
        return self.query_one("#inspector-table", DataTable)

    def reset(
        self, events: list[dict[str, Any]], *, draft: bool = False, skipped_lines: Sequence[int] = ()
    ) -> None:
        """Show exactly `events` (the whole log of a newly selected session).

        A `draft` session has no log yet: the heading says it is created by its first message. The
        heading counts `skipped_lines`, the log's unreadable lines the store left out."""
        self.rows = []
        self._folder = LogRowFolder()
        self._event_count = 0
        self._skipped = len(skipped_lines)
        self.widths = None
        self.table.clear(columns=True)
        self.add_events(events)
        if draft:
            self.query_one("#inspector-heading", Static).update(Text(NO_LOG_YET, style="bold"))

    def add_events(self, events: list[dict[str, Any]]) -> None:
        """Append `events` (already in seq order), folding chunk runs, and keep the newest row visible."""
        known = {row.key: index for index, row in enumerate(self.rows)}
        changed: list[LogRow] = []
        for row in self._folder.feed(events):
            if row.key in known:
                self.rows[known[row.key]] = row
            else:
                known[row.key] = len(self.rows)
                self.rows.append(row)
            changed.append(row)
        self._event_count += len(events)
        heading = Text(f"Log · {self._event_count} events", style="bold")
        if self._skipped:
            lines = "line" if self._skipped == 1 else "lines"
            heading.append(f" · {self._skipped:,} unreadable {lines} skipped", style="dim")
        self.query_one("#inspector-heading", Static).update(heading)
        if not self._refit():
            self._show_rows(changed)
            self._follow_newest()

    def _follow_newest(self) -> None:
        if self.rows:
            self.table.move_cursor(row=len(self.rows) - 1, animate=False)

    def order(self) -> list[tuple[str, str]]:
        """(type, source kind) of every row, top to bottom — what the user reads as the log order."""
        return [(row.type, row.source) for row in self.rows]

    def on_resize(self, event: events.Resize) -> None:
        """The pane changed width: give the preview what is left now."""
        self.call_after_refresh(self._refit)

    def _refit(self) -> bool:
        """Lay the table out again if the rows or the pane need other widths; True if it did."""
        widths = fit_columns(self.rows, self.table.scrollable_content_region.width)
        if widths == self.widths:
            return False
        self.widths = widths
        table = self.table
        table.clear(columns=True)
        for key, width in zip(COLUMNS, (widths.seq, widths.type, widths.source, widths.preview), strict=True):
            label = Text(key, justify="right") if key == "seq" else Text(GAP + key)
            table.add_column(label, key=key, width=width + COLUMN_GAP)
        for row in self.rows:
            table.add_row(*_cells(row, widths.preview), key=row.key)
        self._follow_newest()
        return True

    def _show_rows(self, rows: list[LogRow]) -> None:
        """Add or update `rows` in a table whose widths already fit them."""
        assert self.widths is not None
        table = self.table
        for row in rows:
            cells = _cells(row, self.widths.preview)
            if row.key in table.rows:
                for column, cell in zip(COLUMNS, cells, strict=True):
                    table.update_cell(row.key, column, cell)
            else:
                table.add_row(*cells, key=row.key)


GAP: Final = " " * COLUMN_GAP


def _cells(row: LogRow, preview_cells: int) -> tuple[Text, Text, Text, Text]:
    """The four cells of a row as literal `Text` (DataTable would parse a plain str as markup), each
    after its gap (the seq is right-aligned in a column one cell wider than its widest value)."""
    return (
        Text(row.seq, style="dim", justify="right"),
        Text.assemble(GAP, Text(inert(row.type))),
        Text.assemble(GAP, Text(inert(row.source), style=SOURCE_STYLES.get(row.source.split(":")[0], ""))),
        Text.assemble(
            GAP, Text(truncate_end(inert(row.preview), preview_cells)), no_wrap=True, overflow="ellipsis"
        ),
    )
