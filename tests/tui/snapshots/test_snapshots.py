"""SVG snapshots of the app, one class per feature; each docstring says what the picture shows.

Every app comes from `app_factory.build_harness`: a seeded store with fixed ids, a
fixed clock and cursor blink off. `run_before` waits for workers so no lookup,
preview or reply is half-done when the picture is taken. Regenerate with
`pytest tests/tui/snapshots --snapshot-update` after a deliberate visual change.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app_factory import GatedModel, build_harness, session_id_for
from sessionref.uri import SessionReference, format_session_reference_mention
from sessionref_tui.widgets.composer import Composer
from textual.pilot import Pilot

WIDE = (130, 36)
NARROW = (60, 30)


async def settle(pilot: Pilot[Any]) -> None:
    """Let every worker (lookup, preview, send) finish and the screen catch up."""
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def type_query(pilot: Pilot[Any], query: str) -> None:
    await pilot.press("@", *query)
    await settle(pilot)


async def send(pilot: Pilot[Any], text: str) -> None:
    await pilot.press(*text, "enter")
    await settle(pilot)


class TestMentionPopup:
    def test_popup_open_with_highlight(self, snap_compare: Any, tmp_path: Path) -> None:
        """The `@` picker above the composer: this folder's sessions first (marked), second row highlighted,
        the matched text of no query, ages on the right; the transcript has not moved."""

        async def run_before(pilot: Pilot[Any]) -> None:
            await type_query(pilot, "")
            await pilot.press("down")
            await settle(pilot)

        assert snap_compare(build_harness(tmp_path).app, terminal_size=WIDE, run_before=run_before)

    def test_preview_of_a_long_session(self, snap_compare: Any, tmp_path: Path) -> None:
        """`@incident` narrows to the long incident review; its preview shows how many messages are kept
        and omitted (with bytes) under the budget and the first/last retained lines."""

        async def run_before(pilot: Pilot[Any]) -> None:
            await type_query(pilot, "incident")

        assert snap_compare(build_harness(tmp_path).app, terminal_size=WIDE, run_before=run_before)


class TestChips:
    def test_chips_in_the_composer(self, snap_compare: Any, tmp_path: Path) -> None:
        """Two accepted mentions read `@<title>` as chips inside the draft, followed by plain text."""

        async def run_before(pilot: Pilot[Any]) -> None:
            await type_query(pilot, "flaky")
            await pilot.press("tab")
            await type_query(pilot, "postgres")
            await pilot.press("tab", *"compare the two")
            await settle(pilot)

        assert snap_compare(build_harness(tmp_path).app, terminal_size=WIDE, run_before=run_before)


class TestErrors:
    def test_self_reference_error_keeps_the_draft(self, snap_compare: Any, tmp_path: Path) -> None:
        """Sending a mention of the session itself: the draft is still there and a red line names the
        problem in plain words with its code."""
        harness = build_harness(tmp_path)

        async def run_before(pilot: Pilot[Any]) -> None:
            own = format_session_reference_mention(SessionReference(harness.current_id, "Try it"))
            pilot.app.query_one(Composer).value = f"{own} what did I say?"
            await settle(pilot)
            await pilot.press("enter")
            await settle(pilot)

        assert snap_compare(harness.app, terminal_size=WIDE, run_before=run_before)


class TestInspector:
    def test_after_an_idle_send(self, snap_compare: Any, tmp_path: Path) -> None:
        """Inspector after sending `@<retry session> …` to an idle agent: the `session-reference`
        user/message sits directly before the `user` prompt, then the streamed reply."""
        harness = build_harness(tmp_path, show_inspector=True)

        async def run_before(pilot: Pilot[Any]) -> None:
            await type_query(pilot, "flaky")
            await pilot.press("tab")
            await send(pilot, "what fixed it?")
            await pilot.app.agent.wait_idle()
            await settle(pilot)

        assert snap_compare(harness.app, terminal_size=WIDE, run_before=run_before)

    def test_after_a_running_send(self, snap_compare: Any, tmp_path: Path) -> None:
        """Inspector after a second send while the model was still replying: the same order —
        snapshot right before its prompt — steered into the running turn."""
        model = GatedModel()
        harness = build_harness(tmp_path, model=model, show_inspector=True)

        async def run_before(pilot: Pilot[Any]) -> None:
            await send(pilot, "first question")
            await model.started.wait()
            await type_query(pilot, "flaky")
            await pilot.press("tab")
            await send(pilot, "and this one?")
            model.release.set()
            await pilot.app.agent.wait_idle()
            await settle(pilot)

        assert snap_compare(harness.app, terminal_size=WIDE, run_before=run_before)


class TestTranscript:
    def test_snapshot_row_expanded(self, snap_compare: Any, tmp_path: Path) -> None:
        """After an idle send the "Referenced sessions · …" row is expanded: per-reference stats, then
        the snapshot JSON pretty-printed."""
        harness = build_harness(tmp_path)

        async def run_before(pilot: Pilot[Any]) -> None:
            await type_query(pilot, "release")
            await pilot.press("tab")
            await send(pilot, "what is left?")
            await pilot.app.agent.wait_idle()
            await settle(pilot)
            await pilot.click("CollapsibleTitle")
            await settle(pilot)

        assert snap_compare(harness.app, terminal_size=WIDE, run_before=run_before)


class TestNarrow:
    def test_popup_at_60_columns(self, snap_compare: Any, tmp_path: Path) -> None:
        """At 60 columns the sidebar gives way; picker rows are truncated but stay distinguishable."""

        async def run_before(pilot: Pilot[Any]) -> None:
            await type_query(pilot, "")

        assert snap_compare(build_harness(tmp_path).app, terminal_size=NARROW, run_before=run_before)

    def test_hostile_session_opened_at_60_columns(self, snap_compare: Any, tmp_path: Path) -> None:
        """The hostile session, narrow: its title's `[bold]` markup and the message's escape sequences
        are printed literally in the status bar and transcript."""
        harness = build_harness(tmp_path)

        async def run_before(pilot: Pilot[Any]) -> None:
            pilot.app.open_session(session_id_for("hostile"))
            await settle(pilot)

        assert snap_compare(harness.app, terminal_size=NARROW, run_before=run_before)
