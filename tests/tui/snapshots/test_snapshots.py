"""SVG snapshots of the app, one class per feature; each docstring says what the picture shows.

The pictures come from `scenarios.py` (shared with `scripts/screenshots.py`): a
seeded store with fixed ids, a fixed clock and cursor blink off; every
`run_before` waits for workers so no lookup, preview or reply is half-done.
Regenerate with `pytest tests/tui/snapshots --snapshot-update` after a deliberate visual change.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scenarios import SCENARIOS


def compare(snap_compare: Any, tmp_path: Path, name: str) -> bool:
    scenario = SCENARIOS[name]
    harness, run_before = scenario.build(tmp_path)
    return bool(snap_compare(harness.app, terminal_size=scenario.size, run_before=run_before))


class TestMentionPopup:
    def test_popup_open_with_highlight(self, snap_compare: Any, tmp_path: Path) -> None:
        """The `@` picker above the composer: this folder's sessions first (marked), the second row
        highlighted, ages on the right, the highlighted session's preview below; the transcript has
        not moved."""
        assert compare(snap_compare, tmp_path, "popup")

    def test_preview_of_a_long_session(self, snap_compare: Any, tmp_path: Path) -> None:
        """`@incident` narrows to the long incident review; its preview shows how many messages are
        kept and omitted (with bytes) under the budget and the first/last retained lines."""
        assert compare(snap_compare, tmp_path, "preview")


class TestSources:
    def test_picker_and_sidebar_with_other_agents_sessions(self, snap_compare: Any, tmp_path: Path) -> None:
        """The `@` picker with the demo's Claude Code, Codex CLI and Gemini CLI homes read too: their
        sessions are ranked with the store's own (this folder first, then by last activity), each row
        starting with its source mark (CC, CX, GM; blank for the store's own). The highlighted Claude
        Code session's preview is below; the sidebar shows the same marks."""
        assert compare(snap_compare, tmp_path, "sources")


class TestConversationSearch:
    def test_title_matches_then_what_was_said(self, snap_compare: Any, tmp_path: Path) -> None:
        """`@test` with the conversation index built: the title match ("Fix flaky retry test…") first;
        under the "said in conversation" heading the sessions whose messages say "test" (who said it,
        the snippet with the match emphasised, the age); the highlight on the third row, the release
        checklist's compaction checkpoint, whose preview shows that message in context; "3/3" counts
        the rows of both groups."""
        assert compare(snap_compare, tmp_path, "said")


class TestChips:
    def test_chips_in_the_composer(self, snap_compare: Any, tmp_path: Path) -> None:
        """Two accepted mentions read `@<title>` as chips inside the draft, followed by plain text."""
        assert compare(snap_compare, tmp_path, "chips")


class TestErrors:
    def test_self_reference_error_keeps_the_draft(self, snap_compare: Any, tmp_path: Path) -> None:
        """Sending a mention of the session itself: the draft is still there and a red line names the
        problem in plain words with its code."""
        assert compare(snap_compare, tmp_path, "error")


class TestInspector:
    def test_after_an_idle_send(self, snap_compare: Any, tmp_path: Path) -> None:
        """Inspector after sending `@<retry session> …` to an idle agent: the `session-reference`
        user/message sits directly before the `user` prompt, then the streamed reply."""
        assert compare(snap_compare, tmp_path, "inspector-idle")

    def test_after_a_running_send(self, snap_compare: Any, tmp_path: Path) -> None:
        """Inspector after a second send while the model was still replying: the same order —
        snapshot right before its prompt — steered into the running turn (step 2 of turn 1)."""
        assert compare(snap_compare, tmp_path, "inspector-running")


class TestTranscript:
    def test_snapshot_row_expanded(self, snap_compare: Any, tmp_path: Path) -> None:
        """After an idle send the "Referenced sessions · …" row is expanded: per-reference stats, then
        the snapshot JSON pretty-printed, right above the prompt that cited it."""
        assert compare(snap_compare, tmp_path, "snapshot-row")


class TestQueued:
    def test_messages_sent_while_replying_are_queued(self, snap_compare: Any, tmp_path: Path) -> None:
        """While the model is still replying to the first question, two more messages were sent: they
        sit dim under the conversation as `queued ›` rows (the first with its `@Fix flaky retry…`
        chip) under a line saying the model reads them at its next step and Esc returns them."""
        assert compare(snap_compare, tmp_path, "queued")


class TestCompaction:
    def test_compaction_asks_first(self, snap_compare: Any, tmp_path: Path) -> None:
        """F8 on the retry session opens a small modal over the app naming the session, saying what
        compaction does (summary instead of earlier messages, the log keeps everything) and
        "Enter compacts · Esc keeps the session as it is"; nothing is compacted yet."""
        assert compare(snap_compare, tmp_path, "compact-confirm")


class TestNarrow:
    def test_popup_at_60_columns(self, snap_compare: Any, tmp_path: Path) -> None:
        """At 60 columns the sidebar gives way; picker rows drop the id column (too narrow to tell
        sessions apart) and keep title, folder and age."""
        assert compare(snap_compare, tmp_path, "narrow-popup")

    def test_popup_in_an_80_by_24_terminal(self, snap_compare: Any, tmp_path: Path) -> None:
        """A default 80×24 terminal with other agents' sessions: the sidebar has hidden itself (Ctrl+G
        brings it back), the picker's rows show source mark, title, folder and age without a cut id,
        and the footer fits."""
        assert compare(snap_compare, tmp_path, "terminal-popup")

    def test_hostile_session_opened_at_60_columns(self, snap_compare: Any, tmp_path: Path) -> None:
        """The hostile session, narrow: its title's `[bold]` markup and the message's escape sequences
        are printed literally in the status bar and transcript."""
        assert compare(snap_compare, tmp_path, "hostile-narrow")
