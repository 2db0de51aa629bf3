"""Close title matches (`service.fuzzy_titles`) and how `list_candidates(fuzzy=True)` adds them after
the contract's exact matches, which stay first and unchanged."""

from __future__ import annotations

import asyncio

import pytest
from fakes import Agent, FakeSearchSessions, FakeSessions, SessionBuilder
from hypothesis import given, settings
from hypothesis import strategies as st
from sessionref.service.fuzzy_titles import fuzzy_match
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
