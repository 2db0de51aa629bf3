"""The inspector: the current session's log events, live (seq, type, source kind, preview).

It is how a user sees the delivery order: after a send with a mention, the
`user/message` with source `session-reference` sits right next to the readable
prompt (`user`), in the same order whether the agent was idle or running.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from sessionref_tui.display import inert, truncate_end
from sessionref_tui.widgets.log_rows import LogRow, LogRowFolder

SOURCE_STYLES: dict[str, str] = {
    "user": "bold green",
    "session-reference": "bold magenta",
    "plugin": "yellow",
    "model": "cyan",
}
"""Colour per source kind so a snapshot stands out next to the prompt it belongs to."""

PREVIEW_CELLS = 60
"""The preview column is cut to this many cells (the table does not scroll sideways)."""


class Inspector(Vertical):
    """A live table of log rows; `reset` loads a whole log, `add_events` appends new events."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[LogRow] = []
        self._folder = LogRowFolder()
        self._event_count = 0

    def compose(self) -> ComposeResult:
        yield Static("Log", id="inspector-heading", classes="pane-heading")
        table: DataTable[Text] = DataTable(id="inspector-table", cursor_type="row", zebra_stripes=True)
        table.add_column("seq", key="seq", width=11)  # "12345–12399" for a folded chunk run
        table.add_column("type", key="type", width=20)
        table.add_column("source", key="source", width=17)
        table.add_column("preview", key="preview")
        yield table

    def reset(self, events: list[dict[str, Any]], *, draft: bool = False) -> None:
        """Show exactly `events` (the whole log of a newly selected session).

        A `draft` session has no log yet: the heading says it is created by its first message."""
        self.rows = []
        self._folder = LogRowFolder()
        self._event_count = 0
        self.query_one("#inspector-table", DataTable).clear()
        self.add_events(events)
        if draft:
            self.query_one("#inspector-heading", Static).update(
                Text("Log · no log yet: the first message creates it", style="bold")
            )

    def add_events(self, events: list[dict[str, Any]]) -> None:
        """Append `events` (already in seq order), folding chunk runs, and keep the newest row visible."""
        table: DataTable[Text] = self.query_one("#inspector-table", DataTable)
        known = {row.key: index for index, row in enumerate(self.rows)}
        for row in self._folder.feed(events):
            cells = _cells(row)
            if row.key in known:
                self.rows[known[row.key]] = row
                for column, cell in zip(("seq", "type", "source", "preview"), cells, strict=True):
                    table.update_cell(row.key, column, cell)
            else:
                known[row.key] = len(self.rows)
                self.rows.append(row)
                table.add_row(*cells, key=row.key)
        self._event_count += len(events)
        self.query_one("#inspector-heading", Static).update(
            Text(f"Log · {self._event_count} events", style="bold")
        )
        if self.rows:
            table.move_cursor(row=len(self.rows) - 1, animate=False)

    def order(self) -> list[tuple[str, str]]:
        """(type, source kind) of every row, top to bottom — what the user reads as the log order."""
        return [(row.type, row.source) for row in self.rows]


def _cells(row: LogRow) -> tuple[Text, Text, Text, Text]:
    """The four cells of a row as literal `Text` (DataTable would parse a plain str as markup)."""
    return (
        Text(row.seq, style="dim", justify="right"),
        Text(inert(row.type)),
        Text(inert(row.source), style=SOURCE_STYLES.get(row.source, "")),
        Text(truncate_end(inert(row.preview), PREVIEW_CELLS), no_wrap=True, overflow="ellipsis"),
    )
