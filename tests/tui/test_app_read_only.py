"""A read-only session (here a compressed DSH log): one clear refusal, and the next step one key away."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import zstandard
from app_factory import Harness, build_harness, session_id_for
from sessionref.contract.uri import SessionReference, format_session_reference_mention
from sessionref_tui.mentions import chip_display_text
from sessionref_tui.widgets.composer import Composer
from textual.pilot import Pilot
from textual.widgets import Static
from textual.widgets._footer import FooterKey
from worker_wait import workers_done

TRIP_TITLE = "Weekend in Lisbon"


def make_trip_read_only(harness: Harness, root: Path) -> str:
    """Compress the trip session's log the way DSH stores old sessions (read-only for us)."""
    target = session_id_for("trip")
    (log,) = [path for path in root.rglob("session.jsonl") if target in path.read_text("utf-8")[:300]]
    log.with_suffix(".jsonl.zstd").write_bytes(zstandard.ZstdCompressor().compress(log.read_bytes()))
    log.unlink()
    harness.store.refresh()
    assert not harness.store.is_writable(target)
    return target


async def settle(pilot: Pilot[Any]) -> None:
    await workers_done(pilot.app)
    await pilot.pause()


def footer_keys(pilot: Pilot[Any]) -> set[str]:
    return {key.key for key in pilot.app.query(FooterKey)}


async def test_a_refused_send_offers_a_new_session_that_mentions_it(tmp_path: Path) -> None:
    harness = build_harness(tmp_path, open_session="retry")
    target = make_trip_read_only(harness, tmp_path)
    async with harness.app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        assert "ctrl+f" not in footer_keys(pilot)  # a writable session needs no way out
        pilot.app.chat.open_session(target)
        await settle(pilot)
        assert "ctrl+f" in footer_keys(pilot)

        await pilot.press(*"what about Porto?", "enter")
        await settle(pilot)
        composer = pilot.app.query_one(Composer)
        notice = str(pilot.app.query_one("#composer-notice", Static).render())
        assert notice == (
            "This session is read-only (AGENT_READ_ONLY): Ctrl+F opens a new session that mentions it, "
            "with your draft."
        )
        assert composer.value == "what about Porto?"

        await pilot.press("ctrl+f")
        await settle(pilot)
        assert pilot.app.chat.is_draft
        chip = format_session_reference_mention(SessionReference(target, TRIP_TITLE))
        assert composer.value == f"{chip} what about Porto?"
        assert composer.display_text == f"{chip_display_text(TRIP_TITLE)} what about Porto?"
        assert str(pilot.app.query_one("#composer-notice", Static).render()) == ""

        await pilot.press("enter")
        await settle(pilot)
        await pilot.app.chat.agent.wait_idle()
        created = pilot.app.chat.current_session_id
        messages = [event["data"] for event in harness.events(created) if event["type"] == "user/message"]
        kinds = [message["source"]["kind"] for message in messages]
        assert kinds == ["session-reference", "user"]


async def test_the_palette_offers_it_only_for_a_read_only_session(tmp_path: Path) -> None:
    harness = build_harness(tmp_path, open_session="retry")
    target = make_trip_read_only(harness, tmp_path)
    async with harness.app.run_test(size=(140, 40)) as pilot:
        assert pilot.app.chat.check_action("mention_in_new_session", ()) is False
        pilot.app.chat.open_session(target)
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"mentioning")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert pilot.app.chat.is_draft
        assert pilot.app.query_one(Composer).display_text == f"{chip_display_text(TRIP_TITLE)} "
