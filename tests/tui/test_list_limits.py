"""Every list of sessions in the app takes its size from `Workspace.limits` (one place for both UIs)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from app_factory import build_harness
from composer_harness import settle
from sessionref_tui.widgets.composer import Composer
from textual.command import CommandPalette


async def test_the_picker_and_the_switcher_list_as_many_as_the_workspace_says(tmp_path: Path) -> None:
    harness = build_harness(tmp_path)
    harness.workspace.limits = replace(harness.workspace.limits, mention=2, switcher=3)
    async with harness.app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await pilot.press("@")
        await settle(pilot)
        assert len(pilot.app.query_one(Composer).popup.candidates) == 2
        await pilot.press("escape", "backspace", "ctrl+o")
        await settle(pilot)
        palette = pilot.app.screen
        assert isinstance(palette, CommandPalette)
        assert palette.query_one("CommandList").option_count == 3
