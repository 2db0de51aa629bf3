"""The app with conversation search: it builds the index itself once the sessions are shown, the picker
finds sessions by what was said, and a pick inserts the usual mention that a send resolves."""

from __future__ import annotations

import asyncio
from pathlib import Path

from app_factory import await_text_index, build_harness, draft_id, session_id_for
from scenarios import settle, type_query
from sessionref.contract.uri import parse_session_reference_text
from sessionref_tui.widgets.composer import Composer


async def test_the_app_builds_the_index_and_the_picker_finds_what_was_said(tmp_path: Path) -> None:
    harness = build_harness(tmp_path, text_search=True)
    async with harness.app.run_test(size=(130, 36)) as pilot:
        await await_text_index(pilot, harness)
        await type_query(pilot, "jitter")  # said in the retry session, in no title
        popup = harness.app.query_one(Composer).popup
        assert popup.candidates == ()
        assert [match.session_id for match in popup.said] == [
            session_id_for("retry"),
            session_id_for("incident"),
        ]
        await pilot.press("tab")
        await settle(pilot)
        references = parse_session_reference_text(harness.app.query_one(Composer).value).references
        assert [reference.session_id for reference in references] == [session_id_for("retry")]


async def test_what_the_app_sends_is_searchable_a_moment_later(tmp_path: Path) -> None:
    harness = build_harness(tmp_path, text_search=True)
    async with harness.app.run_test(size=(130, 36)) as pilot:
        await await_text_index(pilot, harness)
        await pilot.press(*"zeppelin mooring rules", "enter")
        await settle(pilot)
        await harness.app.chat.agent.wait_idle()
        conversations = harness.workspace.conversations
        assert conversations is not None
        await asyncio.to_thread(conversations.drain, 30)  # the live refresh, without its delay
        harness.app.chat.action_new_session()
        await type_query(pilot, "zeppelin")
        popup = harness.app.query_one(Composer).popup
        assert [match.session_id for match in popup.said] == [draft_id(1)]  # the session the send created
        assert popup.said[0].snippet == "zeppelin mooring rules"
