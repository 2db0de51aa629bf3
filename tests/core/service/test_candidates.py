"""`list_candidates`: ranking, title labels, filtering, limits, cancellation and the fast path."""

from __future__ import annotations

import asyncio
import itertools

import pytest
from fakes import Agent, FakeSearchSessions, FakeSessions, SessionBuilder
from sessionref.contract.errors import ErrorCode, SessionReferenceError
from sessionref.service.abort import AbortSignal
from sessionref.service.references import SessionReferences


def ranking_sessions(cls: type[FakeSessions] = FakeSessions) -> FakeSessions:
    """Upstream fixture: target(/same,10), other(/else,40), none(no cwd,30), same(/same,20),
    same-later(/same,25) titled "Latest title"."""
    later = SessionBuilder("same-later", cwd="/same", created_at=25)
    later.title("Latest title")
    return cls.of(
        SessionBuilder("target", cwd="/same", created_at=10),
        SessionBuilder("other", cwd="/else", created_at=40),
        SessionBuilder("none", created_at=30),
        SessionBuilder("same", cwd="/same", created_at=20),
        later,
    )


TARGET = Agent("target", "/same")


async def test_candidates_rank_by_cwd_then_recency_with_titles_as_labels() -> None:
    service = SessionReferences(ranking_sessions())
    candidates = await service.list_candidates(TARGET)
    assert [candidate.to_json() for candidate in candidates] == [
        {
            "sessionId": "same-later",
            "label": "Latest title",
            "cwd": "/same",
            "sameWorkspace": True,
            "createdAt": 25,
        },
        {"sessionId": "same", "label": "same", "cwd": "/same", "sameWorkspace": True, "createdAt": 20},
        {"sessionId": "none", "label": "none", "sameWorkspace": False, "createdAt": 30},
        {"sessionId": "other", "label": "other", "cwd": "/else", "sameWorkspace": False, "createdAt": 40},
    ]


async def test_query_matches_cwd_and_title_case_insensitively_and_respects_the_limit() -> None:
    service = SessionReferences(ranking_sessions())
    assert [c.session_id for c in await service.list_candidates(TARGET, "els", 1)] == ["other"]
    latest = await service.list_candidates(TARGET, "LATEST", 1)
    assert [(c.session_id, c.label) for c in latest] == [("same-later", "Latest title")]
    assert await service.list_candidates(TARGET, "zzz") == []


async def test_message_bodies_are_never_searched_and_logs_never_read() -> None:
    sessions = ranking_sessions()
    body = SessionBuilder("quiet", cwd="/x", created_at=50)
    body.user("a secret needle in the body")
    sessions.add(body)
    service = SessionReferences(sessions)
    assert await service.list_candidates(TARGET, "needle") == []
    assert sessions.reads == []


async def test_an_empty_query_looks_up_titles_only_for_the_shown_page() -> None:
    sessions = ranking_sessions()
    service = SessionReferences(sessions)
    await service.list_candidates(TARGET, "", 2)
    assert sessions.title_calls == [["same-later", "same"]]


async def test_a_session_without_a_title_observation_is_labelled_and_found_by_its_id() -> None:
    sessions = FakeSessions.of(SessionBuilder("target", created_at=1), SessionBuilder("source", created_at=5))
    sessions.titles = {}
    candidates = await SessionReferences(sessions).list_candidates(Agent("target"), "source")
    assert [candidate.to_json("rc8") for candidate in candidates] == [
        {"sessionId": "source", "label": "source", "createdAt": 5}
    ]


async def test_a_cwd_less_agent_ranks_cwd_less_sessions_first() -> None:
    candidates = await SessionReferences(ranking_sessions()).list_candidates(Agent("target"))
    assert [c.session_id for c in candidates] == ["none", "other", "same-later", "same"]
    assert not any(c.same_workspace for c in candidates)


@pytest.mark.parametrize("limit", [0, -1, 1.5, True, "3", 2**53])
async def test_an_invalid_limit_is_an_invalid_reference(limit: object) -> None:
    sessions = ranking_sessions()
    with pytest.raises(SessionReferenceError) as raised:
        await SessionReferences(sessions).list_candidates(TARGET, "", limit)
    assert raised.value.code == ErrorCode.INVALID_REFERENCE
    assert raised.value.message == "candidate limit must be a positive safe integer"
    assert sessions.list_calls == 0


async def test_the_configured_candidate_limit_is_the_default_and_integral_floats_are_accepted() -> None:
    service = SessionReferences(ranking_sessions(), {"candidateLimit": 1})
    assert len(await service.list_candidates(TARGET)) == 1
    assert len(await service.list_candidates(TARGET, "", 3.0)) == 3


async def test_mentions_are_canonical() -> None:
    sessions = FakeSessions.of(
        SessionBuilder("target", cwd="/same", created_at=10),
        SessionBuilder("source]", cwd="/same", created_at=20),
    )
    (candidate,) = await SessionReferences(sessions).list_candidates(TARGET)
    assert candidate.mention == "@[source\\]](dsh-session:InNvdXJjZV0i)"
    assert candidate.to_json("rc8", with_mention=True) == {
        "sessionId": "source]",
        "label": "source]",
        "cwd": "/same",
        "createdAt": 20,
        "mention": "@[source\\]](dsh-session:InNvdXJjZV0i)",
    }


async def test_aborting_a_stalled_listing_cancels_it() -> None:
    sessions = ranking_sessions()
    sessions.hold_list = asyncio.Event()
    signal = AbortSignal()
    task = asyncio.create_task(SessionReferences(sessions).list_candidates(TARGET, signal=signal))
    await sessions.list_entered.wait()
    signal.abort("autocomplete superseded")
    with pytest.raises(SessionReferenceError) as raised:
        await task
    assert raised.value.code == ErrorCode.CANCELLED
    sessions.hold_list.set()


async def test_aborting_a_stalled_title_batch_cancels_it() -> None:
    sessions = ranking_sessions()
    sessions.hold_titles = asyncio.Event()
    signal = AbortSignal()
    task = asyncio.create_task(SessionReferences(sessions).list_candidates(TARGET, "s", signal=signal))
    await sessions.titles_entered.wait()
    signal.abort("superseded")
    with pytest.raises(SessionReferenceError) as raised:
        await task
    assert raised.value.code == ErrorCode.CANCELLED
    sessions.hold_titles.set()


async def test_an_already_aborted_signal_lists_nothing() -> None:
    sessions = ranking_sessions()
    signal = AbortSignal()
    signal.abort()
    with pytest.raises(SessionReferenceError) as raised:
        await SessionReferences(sessions).list_candidates(TARGET, signal=signal)
    assert raised.value.code == ErrorCode.CANCELLED
    assert sessions.list_calls == 0


async def test_task_cancellation_propagates_untouched() -> None:
    sessions = ranking_sessions()
    sessions.hold_list = asyncio.Event()
    task = asyncio.create_task(SessionReferences(sessions).list_candidates(TARGET, signal=AbortSignal()))
    await sessions.list_entered.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def _many_sessions(cls: type[FakeSessions]) -> FakeSessions:
    cwds = ["/same", "/else", None, "/same/sub"]
    builders = [SessionBuilder("target", cwd="/same", created_at=0)]
    for index in range(24):
        builder = SessionBuilder(f"s{index:02d}", cwd=cwds[index % 4], created_at=index // 3)
        if index % 5 == 0:
            builder.title(f"Title {index} about Parsing")
        builders.append(builder)
    return cls.of(*builders)


@pytest.mark.parametrize(
    ("cwd", "text", "limit"),
    list(itertools.product(["/same", None, "/else"], ["", "s1", "parsing", "/SAME", "zz"], [1, 3, 50])),
)
async def test_the_candidate_search_fast_path_gives_the_generic_results(
    cwd: str | None, text: str, limit: int
) -> None:
    generic = _many_sessions(FakeSessions)
    fast = _many_sessions(FakeSearchSessions)
    agent = Agent("target", cwd)
    expected = await SessionReferences(generic).list_candidates(agent, text, limit)
    actual = await SessionReferences(fast).list_candidates(agent, text, limit)
    assert actual == expected
    assert isinstance(fast, FakeSearchSessions)
    assert fast.search_calls == 1 and fast.list_calls == 0 and fast.title_calls == []
