"""Close title matches (`service.fuzzy_titles`) and how `list_candidates(fuzzy=True)` adds them after
the contract's exact matches, which stay first and unchanged."""

from __future__ import annotations

import asyncio

import pytest
from fakes import Agent, FakeSearchSessions, FakeSessions, SessionBuilder
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from sessionref.service.fuzzy_titles import (
    TYPO_MIN_CHARS,
    FuzzyQuery,
    fuzzy_match,
    one_edit_apart,
    title_key,
)
from sessionref.service.references import SessionReferences


@pytest.mark.parametrize(
    ("query", "title", "matched"),
    [
        ("postgrse", "Postgres 16 upgrade plan", ["Postgres"]),  # two letters swapped
        (
            "migration postgres",
            "Migration to Postgres for the ledger",
            ["Migration", "Postgres"],
        ),  # any order
        ("ci speedup", "Speed up CI (14 → 4 min)", ["Speed", "up", "CI"]),  # joined words, any order
        ("spdci", "Speed up CI (14 → 4 min)", ["Sp", "d", "CI"]),  # a subsequence on word starts
        ("flaky payments", "Fix flaky retry test in payments", ["flaky", "payments"]),
        ("webhok", "Webhook sender", ["Webhook"]),  # a letter missing
        ("webhqok", "Webhook sender", ["Webhook"]),  # a letter replaced by one the title lacks
        ("xpayments", "Fix flaky retry test in payments", ["payments"]),  # a letter added
    ],
)
def test_a_close_query_matches_and_says_what_matched(query: str, title: str, matched: list[str]) -> None:
    found = fuzzy_match(query, title)
    assert found is not None
    assert [title[start:end] for start, end in found.spans] == matched


@pytest.mark.parametrize(
    ("query", "title"),
    [
        ("pstgres", "Plan the offsite"),
        ("docs", "Dcos cluster"),  # a typo in a word under five letters is another word
        ("zqx", "Postgres 16 upgrade plan"),
        ("ci speedup", "Speed of light trivia"),  # every word must match
        ("", "anything"),
    ],
)
def test_an_unrelated_query_does_not_match(query: str, title: str) -> None:
    assert fuzzy_match(query, title) is None


def test_a_two_letter_abbreviation_matches_from_a_word_start() -> None:
    found = fuzzy_match("pg", "Postgres 16 migration plan")
    assert found is not None and found.spans == ((0, 1), (4, 5))
    assert fuzzy_match("gp", "Postgres 16 migration plan") is None  # the first letter must start a word
    assert fuzzy_match("pgx", "Postgres 16 migration plan") is None  # longer words keep the anchored share


def test_closer_matches_score_higher() -> None:
    exact_start = fuzzy_match("postgres", "Postgres backup notes")
    typo = fuzzy_match("postgrse", "Postgres backup notes")
    assert exact_start is not None and typo is not None and exact_start.score > typo.score


def _sessions(titles: list[str], fast: bool) -> FakeSessions:
    builders = []
    for number, title in enumerate(titles):
        builder = SessionBuilder(f"s{number}", cwd="/same" if number % 3 == 0 else "/else", created_at=number)
        builder.title(title)
        builders.append(builder)
    return (FakeSearchSessions if fast else FakeSessions).of(*builders)


TITLE_WORDS = st.sampled_from(
    ["Postgres", "plan", "CI", "speed", "up", "flaky", "test", "payments", "16", "deploy"]
)
TITLES = st.lists(st.lists(TITLE_WORDS, min_size=1, max_size=4).map(" ".join), min_size=1, max_size=12)
QUERIES = st.sampled_from(
    ["postgres", "pg", "plan", "ci speed", "flaky payments", "postgrse", "spdci", "e", "s1"]
)


@settings(max_examples=60, deadline=None)
@given(titles=TITLES, query=QUERIES, limit=st.integers(1, 8), fast=st.booleans())
def test_exact_candidates_are_unchanged_and_first_with_close_matches_after(
    titles: list[str], query: str, limit: int, fast: bool
) -> None:
    agent = Agent("nobody", "/same")
    exact = asyncio.run(SessionReferences(_sessions(titles, fast)).list_candidates(agent, query, limit))
    both = asyncio.run(
        SessionReferences(_sessions(titles, fast)).list_candidates(agent, query, limit, fuzzy=True)
    )
    assert [c.to_json() for c in both[: len(exact)]] == [c.to_json() for c in exact]
    assert all(candidate.close is None for candidate in both[: len(exact)])
    assert all(candidate.close is not None for candidate in both[len(exact) :])
    assert len(both) <= limit
    assert len({candidate.session_id for candidate in both}) == len(both)
    scores = [candidate.close.score for candidate in both[len(exact) :] if candidate.close is not None]
    assert scores == sorted(scores, reverse=True)


LETTERS = st.sampled_from(list("abcdegiklnoprstuyz 16-_éÉßİ中文"))


@settings(max_examples=400, deadline=None)
@given(
    title=st.one_of(
        TITLE_WORDS, st.lists(TITLE_WORDS, max_size=4).map(" ".join), st.text(LETTERS, max_size=30)
    ),
    query=st.one_of(QUERIES, st.text(LETTERS, min_size=1, max_size=12)),
)
def test_the_character_prefilter_turns_away_only_titles_that_would_not_match(title: str, query: str) -> None:
    # `_scored` is the scoring without the character test in front of it.
    prepared = FuzzyQuery(query)
    assert prepared.match(title) == (prepared._scored(title_key(title)) if prepared.words else None)


@st.composite
def _one_edit_away(draw: st.DrawFn) -> tuple[str, str]:
    word = draw(st.text(st.sampled_from("abcdeéns1"), min_size=5, max_size=9))
    at = draw(st.integers(0, len(word) - 1))
    letter = draw(st.sampled_from("abxzé2"))
    edits = [
        word[:at] + letter + word[at + 1 :],  # replaced
        word[:at] + word[at + 1 :],  # removed
        word[:at] + letter + word[at:],  # added
        word[:at] + word[at + 1 : at + 2] + word[at] + word[at + 2 :],  # swapped with the next
    ]
    return word, draw(st.sampled_from(edits))


@settings(max_examples=300, deadline=None)
@given(
    edit=_one_edit_away(),
    before=st.sampled_from(["", "fix ", "x-"]),
    after=st.sampled_from(["", " now", "_1"]),
)
def test_a_word_one_edit_from_a_title_word_matches_it(edit: tuple[str, str], before: str, after: str) -> None:
    word, typed = edit
    assume(len(typed) >= TYPO_MIN_CHARS and one_edit_apart(typed, word))
    assert fuzzy_match(typed, f"{before}{word}{after}") is not None
