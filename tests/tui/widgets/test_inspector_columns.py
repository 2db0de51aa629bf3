"""The inspector's column layout: the preview gets what the other columns leave."""

from __future__ import annotations

from sessionref_tui.event_view import LogRowFolder
from sessionref_tui.widgets.inspector import MIN_PREVIEW_CELLS, fit_columns


def test_the_preview_column_gets_every_cell_the_other_columns_leave() -> None:
    snapshot = {
        "seq": 7,
        "type": "user/message",
        "data": {"source": {"kind": "session-reference"}, "content": [], "role": "user"},
    }
    chunk = {"seq": 8, "type": "assistant/chunk", "data": {"turn": 1, "step": 1, "chunk": {"text": "hi"}}}
    rows = LogRowFolder().feed([snapshot, chunk])
    widths = fit_columns(rows, 65)
    # "seq", "assistant/chunk ×1", "session-reference"
    assert (widths.seq, widths.type, widths.source) == (3, 18, 17)
    assert widths.preview == 65 - 3 - 18 - 17 - 4  # and one blank cell before each column
    assert fit_columns(rows, 30).preview == MIN_PREVIEW_CELLS
