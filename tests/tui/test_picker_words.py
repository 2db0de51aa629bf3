"""Several words in the `@` picker (issue 19): the query goes on across a space while the picker
has matches, and a space is just text once nothing matches. Esc and chips are unchanged."""

from __future__ import annotations

from composer_harness import NOW_MS, ComposerHarness, FakeCandidate, FakeSource, settle, type_text
from sessionref_tui.lookup import LookupKey, MentionLookupController
from sessionref_tui.mentions import mention_for, mention_token
from textual import events

FLAKY = FakeCandidate("s-flaky", "Fix flaky retry test", "/work/app", NOW_MS - 60_000, True)
PLAN = FakeCandidate("s-plan", "Postgres 16 upgrade plan", "/work/app", NOW_MS - 120_000, True)


def harness() -> ComposerHarness:
    return ComposerHarness(FakeSource([FLAKY, PLAN]))


async def test_the_query_goes_on_across_a_space_while_it_matches_and_enter_takes_the_whole_of_it() -> None:
    app = harness()
    async with app.run_test() as pilot:
        await type_text(pilot, "see @flaky")
        await settle(pilot)
        await type_text(pilot, " re")
        await settle(pilot)
        assert app.composer.popup.is_open
        assert app.source.queries[-1] == "flaky re"
        assert [candidate.session_id for candidate in app.composer.popup.candidates] == ["s-flaky"]
        await pilot.press("enter")
        await settle(pilot)
        assert app.composer.value == f"see {mention_for(FLAKY)} "


def burst(app: ComposerHarness, text: str) -> None:
    """Post `text`'s keys in one go, as the driver does for one read of the terminal: every key is
    handled before the composer hears of the first change."""
    for character in text:
        key = {" ": "space", "\x1b": "escape"}.get(character, character)
        app.post_message(events.Key(key, None if key == "escape" else character))


async def test_several_words_typed_in_one_burst_go_on_as_one_query() -> None:
    app = harness()
    async with app.run_test() as pilot:
        burst(app, "see @flaky re")
        await settle(pilot)
        assert app.composer.popup.is_open
        assert app.source.queries[-1] == "flaky re"
        assert [candidate.session_id for candidate in app.composer.popup.candidates] == ["s-flaky"]


async def test_a_burst_of_words_that_match_nothing_ends_the_word_at_its_space() -> None:
    app = harness()
    async with app.run_test() as pilot:
        burst(app, "@nothing fix")
        await settle(pilot)
        assert not app.composer.popup.is_open
        assert app.composer.value == "@nothing fix"


async def test_escape_in_a_burst_closes_the_word_typed_before_it() -> None:
    app = harness()
    async with app.run_test() as pilot:
        burst(app, "@flaky\x1b")
        await settle(pilot)
        assert not app.composer.popup.is_open
        await type_text(pilot, "x")
        await settle(pilot)
        assert not app.composer.popup.is_open  # typing on in the word keeps it closed
        assert app.composer.value == "@flakyx"


async def test_a_space_is_text_once_nothing_matches() -> None:
    app = harness()
    async with app.run_test() as pilot:
        await type_text(pilot, "@flaky")
        await settle(pilot)
        await type_text(pilot, " zz")
        await settle(pilot)
        assert not app.composer.popup.is_open
        asked = list(app.source.queries)
        await type_text(pilot, " more words")
        await settle(pilot)
        assert not app.composer.popup.is_open
        assert app.source.queries == asked  # the ended word is not asked about again
        assert app.composer.value == "@flaky zz more words"


async def test_a_word_with_no_match_ends_at_the_space() -> None:
    app = harness()
    async with app.run_test() as pilot:
        await type_text(pilot, "@nothing")
        await settle(pilot)
        assert app.source.queries[-1] == "nothing"
        await type_text(pilot, " fix")
        await settle(pilot)
        assert not app.composer.popup.is_open
        assert "nothing fix" not in app.source.queries


async def test_escape_keeps_the_word_closed_across_spaces_too() -> None:
    app = harness()
    async with app.run_test() as pilot:
        await type_text(pilot, "@flaky")
        await settle(pilot)
        await pilot.press("escape")
        await type_text(pilot, " re")
        await settle(pilot)
        assert not app.composer.popup.is_open
        assert "flaky re" not in app.source.queries


def test_a_bare_at_and_a_new_line_never_continue() -> None:
    assert mention_token("@ x", 3, continues_at=0) is None
    assert mention_token("@pg\nplan", 8, continues_at=0) is None
    token = mention_token("@pg 16 plan", 9, continues_at=0)
    assert token is not None and (token.start, token.end, token.query) == (0, 11, "pg 16 pl")
    assert mention_token("@pg 16", 6, continues_at=None) is None


def test_the_controller_lets_a_word_go_on_only_while_its_menu_is_open() -> None:
    class View:
        def lookup_started(self, key: LookupKey) -> None: ...
        def show_loading(self, key: LookupKey) -> None: ...
        def show_results(self, key: LookupKey, candidates: object) -> None: ...
        def show_failure(self, key: LookupKey, error: Exception) -> None: ...
        def show_conversations(self, key: LookupKey, found: object) -> None: ...
        def show_conversation_failure(self, key: LookupKey, error: Exception) -> None: ...
        def hide(self) -> None: ...

    class NoJob:
        def cancel(self) -> object:
            return None

    async def lookup(query: str, signal: object) -> list[str]:
        return []

    controller: MentionLookupController[str] = MentionLookupController(
        lookup, View(), spawn=lambda job: NoJob()
    )
    token = mention_token("@pg", 3)
    controller.follow(token)
    assert controller.continues_at == 0  # not answered yet: a word typed fast goes on
    controller.close()
    assert controller.continues_at is None


def test_a_close_match_highlights_what_matched_loosely_and_an_exact_one_its_substring() -> None:
    from sessionref.service.fuzzy_titles import fuzzy_match
    from sessionref_tui.widgets.candidate_rows import (
        MATCH_STYLE,
        FieldWidths,
        RowColumns,
        RowFields,
        row_pieces,
    )

    def highlighted(label: str, query: str, close: bool) -> list[str]:
        fields = RowFields(label, "", "/w", "1m", False, close=close)
        widths = FieldWidths.of(RowColumns(len(label), 0, 2, 2), 80)
        pieces, _cells = row_pieces(fields, query, 80, widths)
        return [text for text, style in pieces if style is not None and style == MATCH_STYLE]

    assert fuzzy_match("postgrse", PLAN.label) is not None
    assert highlighted(PLAN.label, "postgrse", close=True) == ["Postgres"]
    assert highlighted(PLAN.label, "pg 16 plan", close=True) == ["16", "pg", "plan"]  # in the title's order
    assert highlighted(PLAN.label, "postgrse", close=False) == []  # exact rows keep substring highlights
    assert highlighted(PLAN.label, "upgrade", close=False) == ["upgrade"]
