"""The line mode's second `@` group: sessions found by what was said in them, under the title matches."""

from __future__ import annotations

from prompt_toolkit.formatted_text import to_plain_text
from repl_harness import Harness
from sessionref.contract.uri import parse_session_reference_text
from sessionref.service.conversations import ConversationMatch
from sessionref_tui.repl.chrome import ToolbarState, toolbar_fragments
from sessionref_tui.repl.completer import SAID_MARK, said_label_fragments, said_meta_fragments

DAY_MS = 86_400_000


def shown(harness: Harness) -> list[tuple[str, str]]:
    return [(to_plain_text(c.display), to_plain_text(c.display_meta)) for c in harness.completions]


def said_query(harness: Harness, query: str) -> bool:
    said = harness.mode.lookups.said
    return said is not None and said.query == query


async def test_a_word_only_said_in_a_session_lists_it_in_the_marked_second_group(
    said_harness: Harness,
) -> None:
    said_harness.type("@beads")
    await said_harness.until(lambda: said_query(said_harness, "beads") and said_harness.completions)
    assert shown(said_harness) == [(f"{SAID_MARK}Abacus", shown(said_harness)[0][1])]
    meta = shown(said_harness)[0][1]
    assert meta.startswith("you › counting beads · ")
    matched = [text for style, text in said_harness.completions[0].display_meta if "candidate.match" in style]
    assert matched == ["beads"]
    toolbar = to_plain_text(said_harness.mode._toolbar())
    assert "no matching sessions" not in toolbar and "“ rows: found in what was said" in toolbar


async def test_title_matches_come_first_then_the_said_group(said_harness: Harness) -> None:
    said_harness.type("@pars")
    await said_harness.until(lambda: said_query(said_harness, "pars") and len(said_harness.completions) == 2)
    labels = [label for label, _meta in shown(said_harness)]
    assert labels == ["ABNF parser notes", f"{SAID_MARK}ABNF parser notes"]
    assert shown(said_harness)[1][1].startswith("you › How do I parse ABNF?")


async def test_accepting_a_said_row_inserts_the_same_canonical_mention(said_harness: Harness) -> None:
    said_harness.type("see @beads")
    await said_harness.until(lambda: said_query(said_harness, "beads") and said_harness.completions)
    said_harness.type("\t")
    await said_harness.until(lambda: "dsh-session:" in said_harness.text)
    assert said_harness.text.startswith("see @[Abacus](dsh-session:")
    references = parse_session_reference_text(said_harness.text).references
    assert [reference.session_id for reference in references] == ["abacus-id"]


async def test_two_letters_say_how_many_are_needed_in_the_toolbar(said_harness: Harness) -> None:
    said_harness.type("@ab")
    await said_harness.until(lambda: said_query(said_harness, "ab"))
    said = said_harness.mode.lookups.said
    assert said is not None and said.matches == () and said.note == "type 3 letters to search what was said"
    toolbar = to_plain_text(said_harness.mode._toolbar())
    assert "@ said in conversation: type 3 letters to search what was said" in toolbar


async def test_a_newer_key_drops_the_older_group(said_harness: Harness) -> None:
    said_harness.type("@beads")
    await said_harness.until(lambda: said_query(said_harness, "beads"))
    said_harness.type(" ")  # the cursor leaves the @ word: no menu, no group
    await said_harness.until(lambda: said_harness.mode.lookups.said is None)
    assert said_harness.completions == []


async def test_without_conversation_search_there_is_no_second_group(harness: Harness) -> None:
    harness.type("@beads")
    await harness.until(
        lambda: (
            harness.mode.lookups.latest is not None
            and harness.mode.lookups.latest.query == "beads"
            and not harness.mode.lookups.controller.conversations_pending
        )
    )
    assert harness.mode.lookups.said is None and harness.completions == []


def test_a_hostile_snippet_and_label_are_shown_escaped() -> None:
    match = ConversationMatch(
        "s", "ti\x1b]0;x\x07tle", 1, "assistant", False, 0, "run \x1b[2J now [bold]x[/]", ((4, 8),), False, 0
    )
    label = to_plain_text(said_label_fragments(match))
    meta = to_plain_text(said_meta_fragments(match, 2 * DAY_MS))
    assert label == f"{SAID_MARK}ti\\x1b]0;x\\x07tle"
    assert meta == "assistant › run \\x1b[2J now [bold]x[/] · 2d"
    assert not any(ord(char) < 0x20 or 0x7F <= ord(char) <= 0x9F for char in label + meta)


def test_the_toolbar_names_the_mark_when_said_rows_are_listed() -> None:
    state = ToolbarState(title=None, cwd=None, status="idle", model_name="m", said_rows=True)
    assert "@ “ rows: found in what was said" in to_plain_text(toolbar_fragments(state))


def test_another_agents_session_shows_its_source_mark_after_the_said_mark() -> None:
    match = ConversationMatch("codex:7f1e", "Pagination", 3, "user", False, 0, "keyset", ((0, 6),), False, 0)
    assert to_plain_text(said_label_fragments(match)) == f"{SAID_MARK}CX Pagination"
