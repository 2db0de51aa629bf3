"""`@` completion in the line mode: trigger, async lookup, display, accept, dismiss, stale results."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from prompt_toolkit.formatted_text import to_plain_text
from repl_harness import Harness
from sessionref.contract.uri import parse_session_reference_text


def labels(harness: Harness) -> list[str]:
    return [to_plain_text(completion.display) for completion in harness.completions]


async def test_typing_at_ab_shows_matching_sessions(harness: Harness) -> None:
    harness.type("@ab")
    await harness.until(
        lambda: (
            harness.mode.lookups.latest is not None
            and harness.mode.lookups.latest.query == "ab"
            and harness.completions
        )
    )
    assert labels(harness) == ["ABNF parser notes", "Abacus"]  # same cwd first
    meta = [to_plain_text(completion.display_meta) for completion in harness.completions]
    assert meta[0].startswith("abnf-notes · ● /home/ana/work · ")
    assert meta[1].startswith("abacus-id · /srv/else · ")


async def test_the_match_is_highlighted(harness: Harness) -> None:
    harness.type("@pars")
    await harness.until(lambda: harness.completions)
    fragments = harness.completions[0].display
    matched = [text for style, text in fragments if "candidate.match" in style]
    assert matched == ["pars"]


async def test_tab_accepts_the_canonical_token(harness: Harness) -> None:
    harness.type("see @ab")
    await harness.until(lambda: harness.completions)
    harness.type("\t")
    await harness.until(lambda: "dsh-session:" in harness.text)
    assert harness.text.startswith("see @[ABNF parser notes](dsh-session:")
    assert harness.text.endswith(") ")
    parsed = parse_session_reference_text(harness.text)
    assert [reference.session_id for reference in parsed.references] == ["abnf-notes"]
    assert harness.completions == []


async def test_enter_accepts_while_the_menu_is_open_and_does_not_send(harness: Harness) -> None:
    harness.type("@abac")
    await harness.until(lambda: labels(harness) == ["Abacus"])
    harness.type("\r")
    await harness.until(lambda: "dsh-session:" in harness.text)
    assert parse_session_reference_text(harness.text).references[0].session_id == "abacus-id"
    assert harness.events() == []  # nothing was sent


async def test_down_then_enter_accepts_the_highlighted_row(harness: Harness) -> None:
    harness.type("@ab")
    await harness.until(lambda: len(harness.completions) == 2)
    harness.type("\x1b[B\x1b[B")  # Down twice: first row, then second row
    await harness.until(lambda: "abacus" in harness.text.lower() or "Abacus" in harness.text)
    harness.type("\r")
    await harness.until(lambda: not harness.completions and harness.text.endswith(") "))
    assert parse_session_reference_text(harness.text).references[0].session_id == "abacus-id"


async def test_at_inside_a_word_never_looks_up(harness: Harness) -> None:
    queries: list[str] = []
    real = harness.workspace.references.list_candidates

    async def spy(agent: Any, query: str = "", limit: object = None, **kwargs: Any) -> Any:
        queries.append(query)
        return await real(agent, query, limit, **kwargs)

    harness.workspace.references.list_candidates = spy  # type: ignore[method-assign]
    harness.type("me@ab @x")
    await harness.until(
        lambda: harness.mode.lookups.latest is not None and harness.mode.lookups.latest.query == "x"
    )
    assert "ab" not in queries and "a" not in queries
    assert queries[-1] == "x"


async def test_escape_dismisses_and_the_same_token_stays_closed(harness: Harness) -> None:
    queries: list[str] = []
    real = harness.workspace.references.list_candidates

    async def spy(agent: Any, query: str = "", limit: object = None, **kwargs: Any) -> Any:
        queries.append(query)
        return await real(agent, query, limit, **kwargs)

    harness.workspace.references.list_candidates = spy  # type: ignore[method-assign]
    harness.type("@ab")
    await harness.until(lambda: harness.completions)
    harness.type("\x1b")
    await harness.until(lambda: not harness.completions)
    assert harness.text == "@ab"
    harness.type("n @abac")
    await harness.until(
        lambda: harness.mode.lookups.latest is not None and harness.mode.lookups.latest.query == "abac"
    )
    assert "abn" not in queries  # the dismissed token was not looked up again
    assert labels(harness) == ["Abacus"]


async def test_a_superseded_lookup_is_aborted_and_its_late_result_dropped(harness: Harness) -> None:
    release = asyncio.Event()
    signals: dict[str, Any] = {}
    real = harness.workspace.references.list_candidates

    async def slow_for_a(
        agent: Any, query: str = "", limit: object = None, *, signal: Any = None, **kwargs: Any
    ) -> Any:
        signals[query] = signal
        if query == "a":
            await release.wait()
        return await real(agent, query, limit, **kwargs)

    harness.workspace.references.list_candidates = slow_for_a  # type: ignore[method-assign]
    harness.type("@a")
    await harness.until(lambda: "a" in signals)
    harness.type("bn")
    await harness.until(lambda: labels(harness) == ["ABNF parser notes"])
    assert signals["a"].aborted
    release.set()
    harness.type("o")  # one more lookup round: the released old query must not have overwritten the list
    await harness.until(
        lambda: harness.mode.lookups.latest is not None and harness.mode.lookups.latest.query == "abno"
    )
    assert [latest.query for latest in [harness.mode.lookups.latest]] == ["abno"]


async def test_no_match_leaves_the_menu_closed_and_says_so(harness: Harness) -> None:
    harness.type("@zzzz")
    await harness.until(
        lambda: harness.mode.lookups.latest is not None and harness.mode.lookups.latest.query == "zzzz"
    )
    assert harness.completions == []
    toolbar = "".join(text for _style, text in harness.mode._toolbar())
    assert "no matching sessions" in toolbar


async def test_a_paste_never_opens_the_menu(harness: Harness) -> None:
    queries: list[str] = []
    real = harness.workspace.references.list_candidates

    async def spy(agent: Any, query: str = "", limit: object = None, **kwargs: Any) -> Any:
        queries.append(query)
        return await real(agent, query, limit, **kwargs)

    harness.workspace.references.list_candidates = spy  # type: ignore[method-assign]
    harness.type("\x1b[200~first\r\nsecond @abn\x1b[201~")
    await harness.until(lambda: harness.text == "first\nsecond @abn")
    harness.type(" @abac")  # typing afterwards still completes
    await harness.until(lambda: labels(harness) == ["Abacus"])
    assert "abn" not in queries  # (typed prefixes are "", "a", "ab", "aba", "abac")


async def test_a_bare_at_in_an_empty_store_says_there_are_none_yet(empty_harness: Harness) -> None:
    harness = empty_harness
    harness.type("@")
    await harness.until(
        lambda: harness.mode.lookups.latest is not None and not harness.mode.lookups.searching
    )
    toolbar = "".join(text for _style, text in harness.mode._toolbar())
    assert "no other sessions yet" in toolbar and "no matching" not in toolbar
    harness.type("zz")
    await harness.until(
        lambda: harness.mode.lookups.latest is not None and harness.mode.lookups.latest.query == "zz"
    )
    assert "no matching sessions" in "".join(text for _style, text in harness.mode._toolbar())


async def test_tab_in_a_dismissed_word_asks_again(harness: Harness) -> None:
    harness.type("@ab")
    await harness.until(lambda: harness.completions)
    harness.type("\x1b")
    await harness.until(lambda: not harness.completions)
    harness.type("\t")  # as in the app: Tab in a closed `@` word asks again
    await harness.until(lambda: labels(harness) == ["ABNF parser notes", "Abacus"])
    assert harness.text == "@ab"


async def test_a_draft_put_back_ending_in_an_at_word_does_not_open_the_menu(harness: Harness) -> None:
    queries: list[str] = []
    real = harness.workspace.references.list_candidates

    async def spy(agent: Any, query: str = "", limit: object = None, **kwargs: Any) -> Any:
        queries.append(query)
        return await real(agent, query, limit, **kwargs)

    harness.workspace.references.list_candidates = spy  # type: ignore[method-assign]
    harness.mode.drafts.put_back(["ask @abn"])  # a message returned from the queue, into an empty prompt
    await harness.until(lambda: harness.text == "ask @abn")
    harness.type("o")  # the cursor is in the draft's last `@` word: typing on keeps the menu closed
    await harness.until(lambda: harness.text == "ask @abno")
    harness.type(" @abac")  # a new `@` word still completes
    await harness.until(lambda: labels(harness) == ["Abacus"])
    assert "abn" not in queries and "abno" not in queries


async def test_the_menu_and_sessions_show_as_many_sessions_as_the_workspace_says(harness: Harness) -> None:
    harness.workspace.limits = replace(harness.workspace.limits, mention=1, session_list=1)
    harness.type("@")
    await harness.until(lambda: harness.mode.lookups.latest is not None and harness.completions)
    assert labels(harness) == ["ABNF parser notes"]
    harness.type("\x1b\x15/sessions\r")  # Esc, Ctrl+U clears the line, then the command
    await harness.until(lambda: harness.printed("ABNF parser notes"))
    assert not harness.printed("Abacus")


async def test_the_query_goes_on_across_a_space_while_it_matches(harness: Harness) -> None:
    harness.type("see @abnf")
    await harness.until(lambda: labels(harness) == ["ABNF parser notes"])
    harness.type(" pa")
    await harness.until(
        lambda: (
            harness.mode.lookups.latest is not None
            and harness.mode.lookups.latest.query == "abnf pa"
            and labels(harness) == ["ABNF parser notes"]
        )
    )
    harness.type("\t")
    await harness.until(lambda: "dsh-session:" in harness.text)
    assert harness.text.startswith("see @[ABNF parser notes](dsh-session:")
    assert [reference.session_id for reference in parse_session_reference_text(harness.text).references] == [
        "abnf-notes"
    ]


async def test_several_words_sent_in_one_burst_go_on_as_one_query(harness: Harness) -> None:
    harness.type("see @abnf pa")  # one write: every key is handled before the first check
    await harness.until(
        lambda: (
            harness.mode.lookups.latest is not None
            and harness.mode.lookups.latest.query == "abnf pa"
            and labels(harness) == ["ABNF parser notes"]
        )
    )


async def test_a_space_is_text_once_nothing_matches(harness: Harness) -> None:
    harness.type("@abnf")
    await harness.until(lambda: labels(harness) == ["ABNF parser notes"])
    harness.type(" qqq")
    await harness.until(lambda: harness.mode.lookups.controller.active is None)
    assert harness.completions == []
    harness.type(" more")
    await harness.until(lambda: harness.text == "@abnf qqq more")
    assert harness.mode.lookups.controller.continues_at is None  # the word ended: " more" is text
    assert harness.completions == []
