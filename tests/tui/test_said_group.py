"""The picker's second group, "said in conversation": order under the titles, one keyboard model across
both groups, stale answers dropped, quiet states, the preview of a match in context, and row layout."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from composer_harness import NOW_MS, SESSIONS, Call, ComposerHarness, FakeSource, rendered, settle, type_text
from rich.cells import cell_len
from sessionref.contract.errors import CodedError
from sessionref.contract.uri import parse_session_reference_text
from sessionref.service.abort import AbortSignal
from sessionref.service.conversations import (
    ContextMessage,
    ConversationMatch,
    ConversationSearchResult,
    MessageContext,
)
from sessionref_tui.widgets.candidate_rows import MATCH_STYLE
from sessionref_tui.widgets.reference_preview import render_context
from sessionref_tui.widgets.said_group import NOTHING_SAID, SAID_HEADING, SEARCHING
from sessionref_tui.widgets.said_rows import (
    SaidRowFields,
    label_cells,
    mark_cells,
    render_said_row,
    said_row_pieces,
)

HOUR_MS = 3_600_000


def match(
    session_id: str, label: str, snippet: str, word: str, *, role: str = "user", seq: int = 4
) -> ConversationMatch:
    start = snippet.lower().index(word)
    spans = ((start, start + len(word)),)
    return ConversationMatch(
        session_id, label, seq, role, False, NOW_MS, snippet, spans, False, NOW_MS - 2 * HOUR_MS
    )


SAID = [
    match("s-deploy", "Deploy checklist", "we rolled the deploy back after the smoke test", "smoke"),
    match("s-bug", "Bug triage", "the smoke alarm test is flaky on CI", "smoke", role="assistant"),
    match("s-research", "Research notes", "smokestack metrics from the research cluster", "smoke"),
]


class FakeSaidSource(FakeSource):
    """`FakeSource` that also answers what was said: matches whose snippet holds the query; with
    `hold_said`, each answer waits until the test releases its call."""

    def __init__(self, said: Sequence[ConversationMatch] = SAID, **options: bool) -> None:
        super().__init__(SESSIONS, **options)
        self.said = list(said)
        self.hold_said = False
        self.said_calls: list[Call] = []
        self.context_calls: list[tuple[str, int]] = []
        self.answer: ConversationSearchResult | None = None

    async def conversations(self, query: str, signal: AbortSignal) -> ConversationSearchResult | None:
        if not query.strip():
            return None  # a bare `@`: no group (as `MentionSource.conversations` answers)
        await self._run(self.said_calls, query, signal, self.hold_said)
        if self.answer is not None:
            return self.answer
        if len(query) < 3:
            return ConversationSearchResult(status="too_short", pending=query)
        return ConversationSearchResult(tuple(m for m in self.said if query.lower() in m.snippet.lower()))

    async def said_call(self, query: str) -> Call:
        async with self._call_made:
            await self._call_made.wait_for(lambda: any(call.argument == query for call in self.said_calls))
        return next(call for call in self.said_calls if call.argument == query)

    async def context(self, session_id: str, seq: int, around: int, signal: AbortSignal) -> MessageContext:
        self.context_calls.append((session_id, seq))
        found = next(m for m in self.said if m.session_id == session_id)
        messages = (
            ContextMessage(seq - 1, "assistant", False, "the message before\nsecond line", False),
            ContextMessage(seq, found.role, False, found.snippet, True),
            ContextMessage(seq + 1, "user", False, "and the one after", False),
        )
        return MessageContext(session_id, seq, 5, 9, messages)


def group_text(app: ComposerHarness) -> str:
    group = app.composer.popup.said_group
    return "\n".join(rendered(group.query_one("#said-heading")) + rendered(group.rows))


def popup_text(app: ComposerHarness) -> str:
    popup = app.composer.popup
    status = rendered(popup.query_one("#mention-status"))
    return "\n".join([*rendered(popup.candidate_list), group_text(app), *status])


class TestGroups:
    async def test_title_matches_stay_first_and_the_said_group_follows_under_its_heading(self) -> None:
        app = ComposerHarness(FakeSaidSource())
        async with app.run_test(size=(110, 40)) as pilot:
            await type_text(pilot, "@check")
            await settle(pilot)
            popup = app.composer.popup
            assert [c.session_id for c in popup.candidates] == ["s-deploy"]
            assert popup.said == ()  # "check" is said nowhere
            app.composer.value = ""
            await type_text(pilot, "@smoke")
            await settle(pilot)
            assert popup.candidates == ()
            assert [m.session_id for m in popup.said] == ["s-deploy", "s-bug", "s-research"]
            text = popup_text(app)
            assert SAID_HEADING in text and "you › we rolled the deploy back" in text
            assert "1/3" in text

    async def test_arrows_move_across_both_groups_and_the_heading_is_not_a_row(self) -> None:
        source = FakeSaidSource(
            [match("s-research", "Research notes", "notes on research spikes", "research")]
        )
        app = ComposerHarness(source)
        async with app.run_test(size=(110, 40)) as pilot:
            await type_text(pilot, "@research")
            await settle(pilot)
            popup = app.composer.popup
            assert [c.session_id for c in popup.candidates] == ["s-research"]
            assert len(popup.said) == 1
            assert popup.highlighted_candidate is popup.candidates[0]
            await pilot.press("down")
            assert popup.highlighted_candidate is popup.said[0]
            assert "2/2" in popup_text(app)
            await pilot.press("down")  # wraps to the first title row
            assert popup.highlighted_candidate is popup.candidates[0]
            await pilot.press("up")  # wraps back to the last said row
            assert popup.highlighted_candidate is popup.said[0]

    async def test_picking_a_said_row_inserts_the_same_canonical_mention(self) -> None:
        app = ComposerHarness(FakeSaidSource())
        async with app.run_test(size=(110, 40)) as pilot:
            await type_text(pilot, "see @smoke")
            await settle(pilot)
            await pilot.press("down", "tab")
            await settle(pilot)
            references = parse_session_reference_text(app.composer.value).references
            assert [(r.session_id, r.label) for r in references] == [("s-bug", "Bug triage")]
            assert not app.composer.popup.is_open

    async def test_clicking_a_said_row_picks_it(self) -> None:
        app = ComposerHarness(FakeSaidSource())
        async with app.run_test(size=(110, 40)) as pilot:
            await type_text(pilot, "@smoke")
            await settle(pilot)
            rows = app.composer.popup.said_group.rows
            await pilot.click(rows, offset=(5, 2))
            await settle(pilot)
            references = parse_session_reference_text(app.composer.value).references
            assert [r.session_id for r in references] == ["s-research"]


class TestStaleAndQuiet:
    async def test_titles_show_at_once_and_an_older_keys_group_is_never_shown(self) -> None:
        source = FakeSaidSource()
        source.hold_said = True
        app = ComposerHarness(source)
        async with app.run_test(size=(110, 40)) as pilot:
            await type_text(pilot, "@smok")
            first = await source.said_call("smok")
            await pilot.pause()
            popup = app.composer.popup
            assert popup.is_open and popup.query_text == "smok"  # the titles did not wait
            await type_text(pilot, "e")
            second = await source.said_call("smoke")
            assert first.signal.aborted and first.cancelled
            await pilot.pause()
            assert popup.said == ()  # held: nothing of an older answer is shown or selectable
            second.release.set()
            await settle(pilot)
            assert [m.session_id for m in popup.said] == ["s-deploy", "s-bug", "s-research"]

    async def test_a_held_group_keeps_its_room_draws_blank_and_says_it_is_searching(self) -> None:
        source = FakeSaidSource()
        app = ComposerHarness(source)
        async with app.run_test(size=(110, 40)) as pilot:
            await type_text(pilot, "@smoke")
            await settle(pilot)
            group = app.composer.popup.said_group
            height = group.size.height
            source.hold_said = True
            await type_text(pilot, "s")
            await source.said_call("smokes")
            await pilot.pause()
            assert group.size.height == height
            assert SEARCHING in group_text(app)
            assert "we rolled" not in group_text(app)

    async def test_a_bare_at_has_no_group_and_two_letters_say_what_is_needed(self) -> None:
        source = FakeSaidSource()
        app = ComposerHarness(source)
        async with app.run_test(size=(110, 40)) as pilot:
            await type_text(pilot, "@")
            await settle(pilot)
            group = app.composer.popup.said_group
            assert not group.display and source.said_calls == []
            await type_text(pilot, "sm")
            await settle(pilot)
            assert group.display
            assert "type 3 letters to search what was said" in group_text(app)

    async def test_indexing_and_nothing_found_are_said_quietly(self) -> None:
        source = FakeSaidSource()
        source.answer = ConversationSearchResult(status="indexing", progress=(40, 100))
        app = ComposerHarness(source)
        async with app.run_test(size=(110, 40)) as pilot:
            await type_text(pilot, "@smoke")
            await settle(pilot)
            assert "indexing what was said 40%…" in group_text(app)
            source.answer = ConversationSearchResult()
            await type_text(pilot, "s")
            await settle(pilot)
            assert NOTHING_SAID in group_text(app)

    async def test_a_failing_search_says_why_and_the_titles_stay(self) -> None:
        source = FakeSaidSource()

        async def broken(query: str, signal: AbortSignal) -> ConversationSearchResult:
            raise CodedError("TEXT_SEARCH_UNAVAILABLE", "the index is locked")

        source.conversations = broken  # type: ignore[method-assign]
        app = ComposerHarness(source)
        async with app.run_test(size=(110, 40)) as pilot:
            await type_text(pilot, "@dep")
            await settle(pilot)
            assert [c.session_id for c in app.composer.popup.candidates] == ["s-deploy"]
            assert "unavailable: the index is locked" in group_text(app)

    async def test_a_source_without_conversation_search_shows_no_group(self) -> None:
        app = ComposerHarness(FakeSource(SESSIONS))
        async with app.run_test(size=(110, 40)) as pilot:
            await type_text(pilot, "@research")
            await settle(pilot)
            assert not app.composer.popup.said_group.display


class TestPreviewOfAMatch:
    async def test_the_preview_shows_the_matched_message_with_its_neighbours(self) -> None:
        source = FakeSaidSource()
        app = ComposerHarness(source)
        async with app.run_test(size=(110, 40)) as pilot:
            await type_text(pilot, "@smoke")
            await settle(pilot)
            text = "\n".join(rendered(app.composer.popup.preview))
            assert set(source.context_calls) == {("s-deploy", 4)}
            assert "Deploy checklist · message 5 of 9 · active 2h ago" in text
            assert "assistant › the message before" in text and "second line" not in text
            assert "you › we rolled the deploy back after the smoke test" in text
            assert "user" not in text.split("you › we rolled")[0].split("\n")[-1]
            assert "you › and the one after" in text


# -- pure layout -------------------------------------------------------------------------------


def test_a_row_is_label_role_snippet_and_age_with_the_match_emphasised() -> None:
    row = render_said_row(SAID[0], 90, NOW_MS)
    assert row.plain.startswith("Deploy checklist  you › we rolled the deploy back after the smoke test")
    assert row.plain.endswith("2h") and cell_len(row.plain) == 90
    emphasised = [row.plain[span.start : span.end] for span in row.spans if span.style == MATCH_STYLE]
    assert emphasised == ["smoke"]


def test_a_narrow_row_cuts_the_snippets_start_so_the_match_shows() -> None:
    long = match("s", "Plan", "word " * 30 + "the pg_dump flag was the answer", "pg_dump")
    row = render_said_row(long, 50, NOW_MS)
    assert "pg_dump" in row.plain and "…" in row.plain and cell_len(row.plain) == 50


def test_hostile_labels_and_snippets_are_inert_and_spans_still_fit() -> None:
    hostile = match("s", "\x1b[31mred\x1b[0m [bold]x[/]", "a \x1b]0;t\x07 b pg_dump \u202e end", "pg_dump")
    row = render_said_row(hostile, 100, NOW_MS)
    assert "\x1b" not in row.plain and "\u202e" not in row.plain and "\x07" not in row.plain
    assert "[bold]x[/]" in row.plain
    emphasised = [row.plain[span.start : span.end] for span in row.spans if span.style == MATCH_STYLE]
    assert emphasised == ["pg_dump"]


def test_labels_share_a_column_of_at_most_a_third_of_the_row() -> None:
    rows = [SaidRowFields.of(m, NOW_MS) for m in SAID]
    width = label_cells(rows, 60)
    assert width == 16  # the widest label ("Deploy checklist"): within 30% of 60 (18)
    assert label_cells(rows, 40) == 12  # 30% of 40
    pieces, cells = said_row_pieces(rows[0], 60, width)
    assert cells == 60 and pieces[0][0] == "Deploy checklist"


def test_another_agents_session_starts_with_its_mark_and_labels_stay_aligned() -> None:
    claude = match("claude-code:0b5c", "Speed up CI", "cache the smoke test wheels", "smoke")
    rows = [SaidRowFields.of(m, NOW_MS) for m in (claude, SAID[0])]
    assert mark_cells(rows) == 2 and mark_cells(rows[1:]) == 0
    width = label_cells(rows, 80)
    first = "".join(text for text, _ in said_row_pieces(rows[0], 80, width, 2)[0])
    second = "".join(text for text, _ in said_row_pieces(rows[1], 80, width, 2)[0])
    assert first.startswith("CC Speed up CI") and second.startswith("   Deploy checklist")
    assert first.index("you ›") == second.index("you ›")


def test_render_context_marks_a_compacted_match_and_fits_the_width() -> None:
    context = MessageContext("s", 3, None, 2, (ContextMessage(9, "user", True, "summary of it all", False),))
    text = render_context(context, SAID[0], "Deploy checklist", 60, age="2h")
    lines = text.plain.split("\n")
    assert lines[0].startswith("Deploy checklist · compacted since")
    assert lines[1] == "checkpoint › summary of it all"
    assert all(cell_len(line) <= 60 for line in lines)


async def test_no_group_asks_in_parallel_with_titles_without_waiting() -> None:
    """A held conversation answer does not hold back the title rows (the same event loop turn)."""
    source = FakeSaidSource()
    source.hold_said = True
    app = ComposerHarness(source)
    async with app.run_test(size=(110, 40)) as pilot:
        await type_text(pilot, "@research")
        call = await source.said_call("research")
        await pilot.pause()
        assert [c.session_id for c in app.composer.popup.candidates] == ["s-research"]
        assert not call.finished
        call.release.set()
        await asyncio.wait_for(settle(pilot), 10)
