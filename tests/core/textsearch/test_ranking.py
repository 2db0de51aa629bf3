"""Ranking sessions while asking for their facts only as far as the first screen needs
(`rank_sessions_asking`): the same order as ranking with every session's facts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hypothesis import given, settings
from hypothesis import strategies as st
from sessionref.textsearch.protocol import SessionFacts
from sessionref.textsearch.ranking import rank_sessions, rank_sessions_asking

# Few distinct scores, so that bands hold many sessions and the folder and recency decide inside them.
RELEVANCES = st.one_of(
    st.sampled_from([0.0, -1.0, 1.0, 1.1, 1.15, 2.0, 2.1, 9.0]), st.floats(0.01, 30, allow_nan=False)
)


@st.composite
def _sessions(draw: st.DrawFn) -> tuple[list[tuple[str, int, float]], dict[str, SessionFacts]]:
    count = draw(st.integers(0, 120))
    best = [(f"s{number}", number, draw(RELEVANCES)) for number in range(count)]
    facts = {
        session_id: SessionFacts(draw(st.sampled_from(["/x", "/y", None])), draw(st.integers(0, 500)))
        for session_id, _row, _relevance in best
        if draw(st.integers(0, 9)) > 0  # one in ten has no facts (no longer listed)
    }
    return best, facts


@settings(max_examples=300, deadline=None)
@given(sessions=_sessions(), ranked=st.booleans(), limit=st.one_of(st.none(), st.integers(1, 12)))
def test_asking_for_facts_as_needed_ranks_as_with_every_fact(
    sessions: tuple[list[tuple[str, int, float]], dict[str, SessionFacts]], ranked: bool, limit: int | None
) -> None:
    best, facts = sessions
    asked: list[str] = []

    def provider(session_ids: Sequence[str]) -> Mapping[str, SessionFacts]:
        asked.extend(session_ids)
        return {session_id: facts[session_id] for session_id in session_ids if session_id in facts}

    order, known = rank_sessions_asking(best, provider, "/x", ranked=ranked, limit=limit)
    assert order == rank_sessions(best, facts, "/x", ranked=ranked, limit=limit)
    assert all(known[session.session_id] == facts[session.session_id] for session in order)
    assert len(asked) == len(set(asked))  # no session is asked for twice


def test_a_ranked_first_screen_asks_for_few_sessions_facts() -> None:
    best = [(f"s{number}", number, 100.0 / (number + 1)) for number in range(1000)]
    asked: list[str] = []

    def provider(session_ids: Sequence[str]) -> Mapping[str, SessionFacts]:
        asked.extend(session_ids)
        return {session_id: SessionFacts(None, 0) for session_id in session_ids}

    order, _known = rank_sessions_asking(best, provider, None, ranked=True, limit=20)
    every = {session_id: SessionFacts(None, 0) for session_id, _row, _relevance in best}
    assert order == rank_sessions(best, every, None, ranked=True, limit=20)
    assert len(asked) <= 200
