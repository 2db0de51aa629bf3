"""The current session's folder is "This folder" in the sidebar, the switcher and the picker, named."""

from __future__ import annotations

from pathlib import Path

from app_factory import build_harness, search_palette, session_id_for
from sessionref.service.abort import AbortSignal
from sessionref_tui.widgets.sidebar import Sidebar
from textual.command import CommandPalette
from worker_wait import workers_done

BILLING = "/srv/billing-service"


async def test_one_meaning_everywhere_follows_the_session_on_screen(tmp_path: Path) -> None:
    # A session of another folder than the one the app was started in.
    harness = build_harness(tmp_path, open_session="migration")
    async with harness.app.run_test(size=(140, 40)) as pilot:
        await workers_done(pilot.app)
        await pilot.pause()
        sidebar = pilot.app.query_one(Sidebar)
        option_list = sidebar.query_one("#session-list")
        heading = str(option_list.get_option_at_index(0).prompt)
        assert heading == f"This folder\n{BILLING}"
        here = [session_id_for("migration"), session_id_for("incident")]
        assert [option_list.get_option_at_index(index).id for index in (1, 2)] == here

        references = harness.workspace.references
        candidates = await references.list_candidates(pilot.app.chat.agent, "", signal=AbortSignal())
        marked = [candidate.session_id for candidate in candidates if candidate.same_workspace]
        assert marked == [session_id_for("incident")]

        await search_palette(pilot, "ctrl+o")
        palette = pilot.app.screen
        assert isinstance(palette, CommandPalette)
        shown = [str(option.prompt) for option in palette.query_one("CommandList").options]
        assert [text for text in shown if "●" in text] == [
            next(text for text in shown if text.startswith("Incident review"))
        ]
        assert f"● {BILLING}" in shown[0]


async def test_the_launch_folder_is_named_with_home_shortened(tmp_path: Path) -> None:
    harness = build_harness(tmp_path)
    async with harness.app.run_test(size=(140, 40)) as pilot:
        await workers_done(pilot.app)
        await pilot.pause()
        option_list = pilot.app.query_one(Sidebar).query_one("#session-list")
        assert str(option_list.get_option_at_index(0).prompt) == "This folder\n~/src/payments"
