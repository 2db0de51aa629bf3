"""The app shell with Pilot: sidebar grouping and switching, new session, rename, compact, toggles, errors."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from app_factory import (
    PROJECT_CWD,
    FailingModel,
    Harness,
    build_harness,
    draft_id,
    search_palette,
    session_id_for,
)
from sessionref_tui.screens.confirm_compact import ConfirmCompactScreen
from sessionref_tui.widgets.composer import Composer
from sessionref_tui.widgets.inspector import Inspector
from sessionref_tui.widgets.sidebar import Sidebar
from sessionref_tui.widgets.status_bar import StatusBar
from sessionref_tui.widgets.transcript import (
    AssistantReply,
    CheckpointView,
    Transcript,
    TurnNote,
    UserMessageView,
)
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import OptionList
from textual.widgets._footer import FooterKey
from worker_wait import workers_done


def option_ids(option_list: OptionList) -> list[str | None]:
    return [option_list.get_option_at_index(index).id for index in range(option_list.option_count)]


async def test_sidebar_lists_this_folder_first_then_others(tmp_path: Path) -> None:
    harness = build_harness(tmp_path)
    async with harness.app.run_test(size=(140, 40)) as pilot:
        await workers_done(pilot.app)
        await pilot.pause()
        sidebar = pilot.app.query_one(Sidebar)
        ids = [entry for entry in option_ids(sidebar.query_one(OptionList)) if entry is not None]
        here = [session_id_for(name) for name in ("retry", "index", "release")]
        others = ("migration", "incident", "hostile", "untitled", "trip")
        elsewhere = [session_id_for(name) for name in others]
        assert ids == [harness.current_id, *here, *elsewhere]


async def test_selecting_a_session_in_the_sidebar_switches_to_it(tmp_path: Path) -> None:
    harness = build_harness(tmp_path)
    target = session_id_for("retry")
    async with harness.app.run_test(size=(140, 40)) as pilot:
        await workers_done(pilot.app)
        option_list = pilot.app.query_one(Sidebar).query_one(OptionList)
        option_list.highlighted = option_list.get_option_index(target)
        option_list.action_select()
        await pilot.pause()
        assert pilot.app.chat.current_session_id == target
        prompts = [view.text for view in pilot.app.query(UserMessageView)]
        assert prompts[0].startswith("The payments retry test fails")
        assert len(pilot.app.query(AssistantReply)) == 3
        status = pilot.app.query_one(StatusBar).info
        assert status is not None and status.title == "Fix flaky retry test in payments"


async def test_switcher_finds_a_session_by_title(tmp_path: Path) -> None:
    harness = build_harness(tmp_path)
    async with harness.app.run_test(size=(140, 40)) as pilot:
        await search_palette(pilot, "ctrl+o", "postgres")
        await pilot.press("down", "enter")
        await pilot.pause()
        await workers_done(pilot.app)
        assert pilot.app.chat.current_session_id == session_id_for("migration")


async def stored_ids(harness: Harness) -> set[str]:
    return {record.id for record in await harness.store.list_sessions()}


async def test_new_session_writes_nothing_until_its_first_message(tmp_path: Path) -> None:
    harness = build_harness(tmp_path, open_session="retry")
    async with harness.app.run_test(size=(140, 40)) as pilot:
        await pilot.press("ctrl+n")
        await workers_done(pilot.app)
        await pilot.pause()
        new_id = pilot.app.chat.current_session_id
        assert pilot.app.chat.is_draft and new_id == draft_id(1)
        assert await stored_ids(harness) == set(harness.session_ids)
        assert pilot.app.query_one(Transcript).query(".welcome")
        sidebar = pilot.app.query_one(Sidebar)
        assert [entry.title for entry in sidebar.entries if entry.session_id == new_id] == [None]
        assert "New session" in str(sidebar.query_one(OptionList).get_option(new_id).prompt)
        status = pilot.app.query_one(StatusBar).info
        assert status is not None and status.draft and status.cwd == PROJECT_CWD
        chat = pilot.app.chat
        assert not chat.check_action("rename", ()) and not chat.check_action("compact", ())

        await pilot.press(*"hello there", "enter")
        await workers_done(pilot.app)
        await pilot.app.chat.agent.wait_idle()
        await pilot.pause()
        assert not pilot.app.chat.is_draft and pilot.app.chat.current_session_id == new_id
        assert await stored_ids(harness) == {*harness.session_ids, new_id}
        assert harness.store.record(new_id).cwd == PROJECT_CWD
        assert [view.text for view in pilot.app.query(UserMessageView)] == ["hello there"]
        assert len(pilot.app.query(AssistantReply)) == 1
        assert pilot.app.chat.check_action("rename", ()) and pilot.app.chat.check_action("compact", ())


async def test_leaving_a_new_session_unused_leaves_nothing_behind(tmp_path: Path) -> None:
    harness = build_harness(tmp_path)
    async with harness.app.run_test(size=(140, 40)) as pilot:
        await pilot.press("ctrl+n", "ctrl+n")
        await workers_done(pilot.app)
        pilot.app.chat.open_session(session_id_for("retry"))
        await pilot.pause()
        assert await stored_ids(harness) == set(harness.session_ids)


async def test_rename_writes_the_title_and_updates_status_and_sidebar(tmp_path: Path) -> None:
    harness = build_harness(tmp_path, open_session="retry")
    async with harness.app.run_test(size=(140, 40)) as pilot:
        await pilot.press("ctrl+r")
        await pilot.pause()
        await pilot.press("ctrl+a", "ctrl+k")
        await pilot.press(*"Budget planning")
        await pilot.press("enter")
        await pilot.pause()
        await workers_done(pilot.app)
        await pilot.pause()
        assert harness.store.title(harness.current_id) == "Budget planning"
        info = pilot.app.query_one(StatusBar).info
        assert info is not None and info.title == "Budget planning"
        assert ("session/title", "user") in pilot.app.query_one(Inspector).order()


async def test_rename_cancelled_with_escape_changes_nothing(tmp_path: Path) -> None:
    harness = build_harness(tmp_path, open_session="retry")
    async with harness.app.run_test(size=(140, 40)) as pilot:
        await pilot.press("ctrl+r")
        await pilot.pause()
        await pilot.press(*"nope", "escape")
        await pilot.pause()
        assert harness.store.title(harness.current_id) == "Fix flaky retry test in payments"


def compaction_plugins(harness: Harness, session_id: str) -> list[str]:
    return [
        (event["data"].get("source") or {}).get("plugin")
        for event in harness.events(session_id)
        if event["type"] == "user/message" and (event["data"].get("source") or {}).get("plugin")
    ]


async def test_compaction_asks_first_and_enter_compacts(tmp_path: Path) -> None:
    harness = build_harness(tmp_path, open_session="retry")
    target = session_id_for("retry")
    async with harness.app.run_test(size=(140, 40)) as pilot:
        await pilot.press("f8")
        await pilot.pause()
        assert isinstance(pilot.app.screen, ConfirmCompactScreen)
        assert compaction_plugins(harness, target) == []  # nothing happens before the answer
        await pilot.press("enter")
        await workers_done(pilot.app)
        await pilot.pause()
        assert not isinstance(pilot.app.screen, ConfirmCompactScreen)
        assert compaction_plugins(harness, target) == ["compact"]
        assert len(pilot.app.query(CheckpointView)) == 1


async def test_escape_in_the_compaction_question_keeps_the_session_as_it_is(tmp_path: Path) -> None:
    harness = build_harness(tmp_path, open_session="retry")
    async with harness.app.run_test(size=(140, 40)) as pilot:
        before = harness.events()
        await search_palette(pilot, "ctrl+p", "compact")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(pilot.app.screen, ConfirmCompactScreen)
        await pilot.press("escape")
        await workers_done(pilot.app)
        await pilot.pause()
        assert not isinstance(pilot.app.screen, ConfirmCompactScreen)
        assert harness.events() == before


async def test_ctrl_l_redraws_the_screen_and_never_compacts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    harness = build_harness(tmp_path, open_session="retry")
    async with harness.app.run_test(size=(140, 40)) as pilot:
        before = harness.events()
        repaints: list[object] = []
        original = Screen.refresh

        def spy(self: Screen[Any], *regions: Any, **kwargs: Any) -> Any:
            if self is pilot.app.screen and not regions:
                repaints.append(self)
            return original(self, *regions, **kwargs)

        monkeypatch.setattr(Screen, "refresh", spy)
        await pilot.press("ctrl+l")
        await workers_done(pilot.app)
        await pilot.pause()
        assert repaints
        assert not isinstance(pilot.app.screen, ConfirmCompactScreen)
        assert harness.events() == before


async def test_toggles_hide_and_show_inspector_and_sidebar(tmp_path: Path) -> None:
    harness = build_harness(tmp_path)
    async with harness.app.run_test(size=(170, 40)) as pilot:
        inspector = pilot.app.query_one(Inspector)
        sidebar = pilot.app.query_one(Sidebar)
        assert not inspector.display
        await pilot.press("ctrl+t")
        assert inspector.display and sidebar.display
        await pilot.press("ctrl+g")
        assert not sidebar.display
        await pilot.press("ctrl+t", "ctrl+g")
        assert not inspector.display and sidebar.display


async def test_on_a_medium_screen_the_inspector_takes_the_sidebars_room(tmp_path: Path) -> None:
    harness = build_harness(tmp_path)
    async with harness.app.run_test(size=(120, 40)) as pilot:
        sidebar = pilot.app.query_one(Sidebar)
        assert sidebar.display
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert not sidebar.display
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert sidebar.display


async def test_model_error_is_shown_as_a_failed_turn(tmp_path: Path) -> None:
    harness = build_harness(tmp_path, model=FailingModel())
    async with harness.app.run_test(size=(140, 40)) as pilot:
        await pilot.press(*"hello?", "enter")
        await workers_done(pilot.app)
        await pilot.app.chat.agent.wait_idle()
        await pilot.pause()
        notes = [str(note.render()) for note in pilot.app.query(TurnNote)]
        assert any("Turn failed" in note and "API key was rejected" in note for note in notes)


async def test_a_read_only_session_hides_rename_and_compact(tmp_path: Path) -> None:
    import zstandard

    harness = build_harness(tmp_path, open_session="retry")
    target = session_id_for("trip")
    (log,) = [path for path in tmp_path.rglob("session.jsonl") if target in path.read_text("utf-8")[:300]]
    log.with_suffix(".jsonl.zstd").write_bytes(zstandard.ZstdCompressor().compress(log.read_bytes()))
    log.unlink()
    harness.store.refresh()
    async with harness.app.run_test(size=(140, 40)) as pilot:
        assert pilot.app.chat.check_action("rename", ()) and pilot.app.chat.check_action("compact", ())
        pilot.app.chat.open_session(target)
        await pilot.pause()
        assert not harness.store.is_writable(target)
        assert not pilot.app.chat.check_action("rename", ())
        assert not pilot.app.chat.check_action("compact", ())
        info = pilot.app.query_one(StatusBar).info
        assert info is not None and not info.writable


async def test_sidebar_is_capped_with_a_hint_to_search(tmp_path: Path) -> None:
    harness = build_harness(tmp_path)
    harness.workspace.limits = replace(harness.workspace.limits, sidebar=3)
    async with harness.app.run_test(size=(140, 40)) as pilot:
        await workers_done(pilot.app)
        await pilot.pause()
        option_list = pilot.app.query_one(Sidebar).query_one(OptionList)
        ids = [entry for entry in option_ids(option_list) if entry is not None]
        assert ids == [harness.current_id, *(session_id_for(name) for name in ("retry", "index", "release"))]
        last = option_list.get_option_at_index(option_list.option_count - 1)
        assert "Ctrl+O searches them all" in str(last.prompt)


async def test_palette_runs_app_commands_by_name(tmp_path: Path) -> None:
    harness = build_harness(tmp_path)
    async with harness.app.run_test(size=(140, 40)) as pilot:
        assert not pilot.app.query_one(Inspector).display
        await search_palette(pilot, "ctrl+p", "toggle insp")
        await pilot.press("enter")
        await pilot.pause()
        assert pilot.app.query_one(Inspector).display


async def test_a_session_deleted_meanwhile_is_not_opened_and_says_why(tmp_path: Path) -> None:
    harness = build_harness(tmp_path)
    target = session_id_for("trip")
    async with harness.app.run_test(size=(140, 40)) as pilot:
        harness.store.delete_session(target)
        pilot.app.chat.open_session(target)
        await pilot.pause()
        assert pilot.app.chat.current_session_id == harness.current_id
        messages = [notification.message for notification in pilot.app._notifications]
        assert any("Could not open the session" in message for message in messages)


async def test_a_new_sessions_first_message_names_it_in_the_sidebar(tmp_path: Path) -> None:
    """The fallback title comes from the index (no title event is written); the sidebar must follow."""
    harness = build_harness(tmp_path)
    async with harness.app.run_test(size=(140, 40)) as pilot:
        await pilot.press("ctrl+n")
        await workers_done(pilot.app)
        await pilot.pause()
        new_id = pilot.app.chat.current_session_id
        sidebar = pilot.app.query_one(Sidebar)
        assert [e.title for e in sidebar.entries if e.session_id == new_id] == [None]
        await pilot.press(*"Plan the roadmap review", "enter")
        await workers_done(pilot.app)
        await pilot.pause()
        await workers_done(pilot.app)
        await pilot.pause()
        assert harness.store.title(new_id) == "Plan the roadmap review"
        assert [e.title for e in sidebar.entries if e.session_id == new_id] == ["Plan the roadmap review"]


def footer_keys(pilot: Pilot[Any]) -> dict[str, str]:
    """What the footer shows: key → description."""
    return {key.key: key.description for key in pilot.app.query(FooterKey)}


async def test_the_footer_shows_how_to_quit_and_the_newline_key_every_terminal_sends(tmp_path: Path) -> None:
    harness = build_harness(tmp_path)
    async with harness.app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        shown = footer_keys(pilot)
        assert shown["ctrl+q"] == "Quit"
        assert shown["ctrl+j"] == "New line"
        assert "shift+enter" not in shown
        composer = pilot.app.query_one(Composer)
        assert "Ctrl+J new line" in composer.input.placeholder
        assert "Shift+Enter" not in composer.input.placeholder
        await pilot.press("a", "ctrl+j", "b", "alt+enter", "c", "shift+enter", "d")
        assert composer.value == "a\nb\nc\nd"
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert pilot.app.return_code == 0


async def test_the_inspector_gives_its_spare_width_to_the_preview_at_120_columns(tmp_path: Path) -> None:
    harness = build_harness(tmp_path, open_session="retry")
    async with harness.app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+t")
        await pilot.pause()
        await pilot.pause()
        inspector = pilot.app.query_one(Inspector)
        table = inspector.table
        assert inspector.widths is not None
        used = sum(column.get_render_width(table) for column in table.columns.values())
        assert used == table.scrollable_content_region.width  # nothing left over, nothing cut
        assert inspector.widths.preview >= 30
        previews = [str(table.get_row_at(index)[3]) for index in range(table.row_count)]
        assert previews[2].startswith(" The payments retry test fails")
        assert len(previews[2]) == 1 + inspector.widths.preview  # a long text fills the column
        assert table.cursor_row == table.row_count - 1


async def test_an_empty_store_says_there_are_no_other_sessions_yet(tmp_path: Path) -> None:
    harness = build_harness(tmp_path, seed=False)
    async with harness.app.run_test(size=(140, 40)) as pilot:
        await pilot.press("@")
        await workers_done(pilot.app)
        await pilot.pause()
        status = str(pilot.app.query_one("#mention-status").render())
        assert status.startswith("No other sessions yet")
        assert await stored_ids(harness) == set()


async def test_a_session_without_a_title_is_called_new_session_in_the_switcher(tmp_path: Path) -> None:
    harness = build_harness(tmp_path, seed=False)
    untitled = harness.store.create_session(cwd=PROJECT_CWD).id  # e.g. created by another program
    async with harness.app.run_test(size=(140, 40)) as pilot:
        await search_palette(pilot, "ctrl+o")
        shown = [str(option.prompt) for option in pilot.app.screen.query_one("CommandList").options]
        assert len(shown) == 1 and shown[0].startswith("New session  ·  ● ~/src/payments")
        assert untitled not in shown[0]
