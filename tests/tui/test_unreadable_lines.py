"""A log with unreadable lines in the middle: the app shows what is readable and says what it skipped."""

from __future__ import annotations

from pathlib import Path

from app_factory import build_harness, session_id_for
from composer_harness import settle
from repl_harness import user_event
from sessionref_tui.widgets.inspector import Inspector
from sessionref_tui.widgets.transcript import Transcript, UserMessageView
from textual.widgets import Static
from unreadable_lines import break_log


async def test_the_transcript_and_the_inspector_say_how_many_lines_were_skipped(tmp_path: Path) -> None:
    harness = build_harness(tmp_path, open_session="retry", show_inspector=True)
    broken = break_log(harness.store, session_id_for("retry"), 2, user_event("after the crash", "m-after"))
    async with harness.app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        transcript = pilot.app.query_one(Transcript)
        notes = [str(note.render()) for note in transcript.query(".skipped-lines")]
        assert notes == [f"2 unreadable lines in this log were skipped (lines {broken[0]}, {broken[1]})"]
        assert transcript.children[0].has_class("skipped-lines")  # above the conversation
        assert [view.text for view in transcript.query(UserMessageView)][-1] == "after the crash"
        heading = pilot.app.query_one(Inspector).query_one("#inspector-heading", Static)
        assert "2 unreadable lines skipped" in str(heading.render())


async def test_a_clean_log_says_nothing_about_skipped_lines(tmp_path: Path) -> None:
    harness = build_harness(tmp_path, open_session="retry", show_inspector=True)
    async with harness.app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        assert not pilot.app.query_one(Transcript).query(".skipped-lines")
        heading = pilot.app.query_one(Inspector).query_one("#inspector-heading", Static)
        assert "skipped" not in str(heading.render())
