"""The app with Claude Code, Codex CLI and Gemini CLI sessions: picked, shown, refused, continued."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app_factory import build_harness
from sessionref.contract.uri import SessionReference, format_session_reference_mention
from sessionref_tui.demo_histories import history_id
from sessionref_tui.widgets.candidate_rows import RowFields
from sessionref_tui.widgets.composer import Composer
from sessionref_tui.widgets.mention_popup import MentionPopup
from sessionref_tui.widgets.transcript import AssistantReply, Transcript, UserMessageView
from textual.pilot import Pilot
from textual.widgets import Static
from worker_wait import workers_done

CI = f"claude-code:{history_id('claude-ci')}"
CI_TITLE = "Speed up CI (14 → 4 min)"


async def settle(pilot: Pilot[Any]) -> None:
    await pilot.pause()
    await workers_done(pilot.app)
    await pilot.pause()


async def test_the_picker_lists_every_source_with_its_mark_and_picks_one(tmp_path: Path) -> None:
    harness = build_harness(tmp_path / "store", histories=tmp_path / "agents")
    async with harness.app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await pilot.press("@", *"ci")
        await settle(pilot)
        popup = pilot.app.query_one(MentionPopup)
        rows: list[RowFields] = popup.candidate_list._rows
        assert [row.mark for row in rows][:1] == ["CC"]
        assert rows[0].label == CI_TITLE
        await pilot.press("tab", *" what changed?", "enter")
        await settle(pilot)
        await pilot.app.chat.agent.wait_idle()
        messages = [event["data"] for event in harness.events() if event["type"] == "user/message"]
        assert [message["source"]["kind"] for message in messages] == ["session-reference", "user"]
        (reference,) = messages[0]["source"]["references"]
        assert reference["sessionId"] == CI and reference["label"] == CI_TITLE


async def test_a_foreign_session_is_shown_in_order_refused_and_continued_with_ctrl_f(tmp_path: Path) -> None:
    harness = build_harness(tmp_path / "store", histories=tmp_path / "agents")
    async with harness.app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        pilot.app.chat.open_session(CI)
        await settle(pilot)
        transcript = pilot.app.query_one(Transcript)
        texts = [row.text for row in transcript.children if isinstance(row, UserMessageView | AssistantReply)]
        order = [
            next(i for i, text in enumerate(texts) if needle in text)
            for needle in ("CI takes 14 minutes", "Let me look at the workflow", "Three things dominate",
                           "Fix the first two", "Done: `actions/cache`")
        ]  # fmt: skip
        assert order == sorted(order)  # every message in its place: answers are not merged
        await pilot.press(*"and the docker build?", "enter")
        await settle(pilot)
        notice = str(pilot.app.query_one("#composer-notice", Static).render())
        assert "AGENT_READ_ONLY" in notice and "Ctrl+F" in notice
        await pilot.press("ctrl+f")
        await settle(pilot)
        assert pilot.app.chat.is_draft
        chip = format_session_reference_mention(SessionReference(CI, CI_TITLE))
        assert pilot.app.query_one(Composer).value == f"{chip} and the docker build?"
