"""Hostile data (escape sequences, Rich markup) is shown as literal text in every pane of the app."""

from __future__ import annotations

from pathlib import Path

from app_factory import build_harness, session_id_for
from sessionref_tui.widgets.inspector import Inspector
from sessionref_tui.widgets.sidebar import Sidebar
from sessionref_tui.widgets.status_bar import StatusBar
from sessionref_tui.widgets.transcript import UserMessageView
from textual.widgets import DataTable, OptionList
from worker_wait import workers_done

SIZE = (160, 45)
LITERAL_MARKUP = "[bold]not bold[/bold]"


async def test_hostile_title_and_text_stay_inert_everywhere(tmp_path: Path) -> None:
    harness = build_harness(tmp_path, show_inspector=True)
    hostile = session_id_for("hostile")
    # A title written straight into the log (not through rename), so it keeps its raw escapes.
    harness.store.append(
        hostile,
        [{"type": "session/title", "data": {"title": "\x1b[31mRED\x1b[0m " + LITERAL_MARKUP, "source": {}}}],
    )
    async with harness.app.run_test(size=SIZE) as pilot:
        await workers_done(pilot.app)
        await pilot.pause()
        option_list = pilot.app.query_one(Sidebar).query_one(OptionList)
        sidebar_text = str(option_list.get_option(hostile).prompt)
        assert LITERAL_MARKUP in sidebar_text
        assert "\x1b" not in sidebar_text

        pilot.app.chat.open_session(hostile)
        await workers_done(pilot.app)
        await pilot.pause()

        status = str(pilot.app.query_one(StatusBar).render())
        assert LITERAL_MARKUP in status
        assert "\x1b" not in status

        prompt = pilot.app.query_one(UserMessageView)
        shown = str(prompt.render())
        assert "\\x1b[2J" in shown and "[red]red?[/red]" in shown
        assert "\x1b" not in shown

        previews = [row.preview for row in pilot.app.query_one(Inspector).rows]
        assert any("[red]red?[/red]" in preview for preview in previews)
        table = pilot.app.query_one("#inspector-table", DataTable)
        cells = [str(cell) for index in range(table.row_count) for cell in table.get_row_at(index)]
        # The preview cell is cut to the pane; what it shows is the escape sequence spelled out.
        assert any("Paste from a tool log: \\x1b[2J" in cell for cell in cells)
        assert not any("\x1b" in cell for cell in cells)

        # What reaches the terminal: the rendered screen shows the markup literally, no raw escapes.
        screen = pilot.app.export_screenshot()
        assert "bold[/bold]" in screen
        assert "\x1b" not in screen
