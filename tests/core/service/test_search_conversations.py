"""`SessionReferences.search_conversations` over a fake backend: the one request it sends (the
searching session excluded there), the backend's labelled matches passed on in order, cancellation,
the states without an index, and `message_context` for the preview."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from typing import Any

import pytest
from fakes import Agent, FakeSessions, SessionBuilder
from sessionref.contract.errors import ErrorCode, SessionReferenceError
from sessionref.service.abort import AbortSignal
from sessionref.service.conversations import CONTEXT_TEXT_CHARS, describe_search_status
from sessionref.service.protocols import (
    ConversationMatch,
    ConversationQuery,
    ConversationRequest,
    ConversationSearchResult,
)
from sessionref.service.references import SessionReferences


def hit(
    session_id: str, seq: int = 3, *, label: str | None = None, same: bool = False, activity: int = 10
) -> ConversationMatch:
    return ConversationMatch(
        session_id,
        label or session_id,
        seq,
        "user",
        False,
        5,
        f"we found the flag in {session_id}",
        ((3, 8),),
        same,
        activity,
    )


@dataclass
class FakeConversations:
    """A `ConversationQuery` answering fixed hits; records its calls and the thread it ran in."""

    answer: ConversationSearchResult
    calls: list[ConversationRequest] = field(default_factory=list)
    threads: list[int] = field(default_factory=list)

    def search_conversations(
        self, request: ConversationRequest, *, cancel: threading.Event
    ) -> ConversationSearchResult:
        self.threads.append(threading.get_ident())
        self.calls.append(request)
        return self.answer


class BlockingConversations:
    """A search that runs until it is cancelled (as a long SQLite statement would), then raises."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.stopped = threading.Event()

    def search_conversations(
        self, request: ConversationRequest, *, cancel: threading.Event
    ) -> ConversationSearchResult:
        self.entered.set()
        if not cancel.wait(timeout=30):
            raise AssertionError("the service never cancelled the search")
        self.stopped.set()
        raise RuntimeError("interrupted")


def service(backend: Any) -> SessionReferences:
    return SessionReferences(FakeSessions(), conversations=backend)


def test_the_fake_backends_satisfy_the_protocol() -> None:
    assert isinstance(FakeConversations(ConversationSearchResult()), ConversationQuery)
    assert isinstance(BlockingConversations(), ConversationQuery)


async def test_one_request_goes_to_the_backend_and_its_labelled_matches_come_back_in_order() -> None:
    matches = (hit("b", same=True), hit("a", label="Retry budget"), hit("c", seq=9))
    backend = FakeConversations(ConversationSearchResult(matches))
    found = await service(backend).search_conversations(Agent("me", "/work"), "flag", 20)
    assert found.matches == matches
    assert found.matches[1].mention.startswith("@[Retry budget](dsh-session:")
    assert found.status == "ok" and found.note is None
    assert backend.calls == [ConversationRequest("flag", 20, exclude_session_id="me", cwd="/work")]


async def test_a_vantage_without_a_session_excludes_nothing() -> None:
    backend = FakeConversations(ConversationSearchResult((hit("x"),)))
    await service(backend).search_conversations(Agent("", "/here"), "flag")
    assert backend.calls[0].exclude_session_id is None


async def test_the_search_runs_in_a_worker_thread() -> None:
    backend = FakeConversations(ConversationSearchResult())
    await service(backend).search_conversations(Agent("me"), "flag")
    assert backend.threads and backend.threads[0] != threading.get_ident()


async def test_an_abort_cancels_with_the_contract_code_and_interrupts_the_backend() -> None:
    backend = BlockingConversations()
    signal = AbortSignal()
    search = asyncio.create_task(service(backend).search_conversations(Agent("me"), "flag", signal=signal))
    await asyncio.to_thread(backend.entered.wait, 30)
    signal.abort("superseded")
    with pytest.raises(SessionReferenceError) as raised:
        await search
    assert raised.value.code == ErrorCode.CANCELLED
    assert await asyncio.to_thread(backend.stopped.wait, 30)


async def test_task_cancellation_also_interrupts_the_backend() -> None:
    backend = BlockingConversations()
    search = asyncio.create_task(service(backend).search_conversations(Agent("me"), "flag"))
    await asyncio.to_thread(backend.entered.wait, 30)
    search.cancel()
    with pytest.raises(asyncio.CancelledError):
        await search
    assert await asyncio.to_thread(backend.stopped.wait, 30)


async def test_an_aborted_signal_never_calls_the_backend() -> None:
    backend = FakeConversations(ConversationSearchResult((hit("x"),)))
    signal = AbortSignal()
    signal.abort("gone")
    with pytest.raises(SessionReferenceError):
        await service(backend).search_conversations(Agent("me"), "flag", signal=signal)
    assert backend.calls == []


@pytest.mark.parametrize("limit", [0, -1, 1.5, "3", True])
async def test_a_bad_limit_is_the_candidate_limit_error(limit: object) -> None:
    with pytest.raises(SessionReferenceError) as raised:
        await service(FakeConversations(ConversationSearchResult())).search_conversations(
            Agent("me"), "x", limit
        )
    assert raised.value.code == ErrorCode.INVALID_REFERENCE


async def test_text_must_be_a_string() -> None:
    with pytest.raises(SessionReferenceError) as raised:
        await service(FakeConversations(ConversationSearchResult())).search_conversations(Agent("me"), 3)  # type: ignore[arg-type]
    assert raised.value.code == ErrorCode.INVALID_REFERENCE


async def test_without_a_backend_nothing_is_found_and_the_note_says_why() -> None:
    found = await SessionReferences(FakeSessions()).search_conversations(Agent("me"), "flag")
    assert found.matches == () and found.status == "off"
    assert found.note is not None and "not set up" in found.note


async def test_states_without_matches_are_passed_on_with_words_for_the_ui() -> None:
    backend = FakeConversations(ConversationSearchResult(status="indexing", progress=(40, 100)))
    found = await service(backend).search_conversations(Agent("me"), "flag")
    assert (found.status, found.progress, found.note) == (
        "indexing",
        (40, 100),
        "indexing what was said 40%…",
    )


def test_status_words() -> None:
    assert describe_search_status("ok") is None
    assert describe_search_status("too_short") == "type 3 letters to search what was said"
    assert describe_search_status("indexing") == "indexing what was said…"
    assert describe_search_status("indexing", (100, 100)) == "indexing what was said 99%…"
    assert describe_search_status("unavailable", message="no FTS5") == (
        "search of what was said is unavailable: no FTS5"
    )


def test_a_match_as_json() -> None:
    backend = FakeConversations(ConversationSearchResult((hit("a", label="Plan"),)))
    found = asyncio.run(service(backend).search_conversations(Agent("me"), "flag"))
    shape = found.matches[0].to_json()
    assert shape["snippet"] == {"text": "we found the flag in a", "spans": [[3, 8]]}
    assert (shape["sessionId"], shape["label"], shape["seq"], shape["role"]) == ("a", "Plan", 3, "user")
    assert shape["mention"] == found.matches[0].mention


# -- message_context -------------------------------------------------------------------------


def long_session() -> SessionBuilder:
    session = SessionBuilder("s", cwd="/w")
    session.user("first question")  # 0
    session.assistant("first answer")  # 1
    session.tool_result("tool output")  # 2: never projected
    session.user("the pg_dump flag was --no-owner")  # 3
    session.assistant("x" * (CONTEXT_TEXT_CHARS + 500))  # 4
    session.user("thanks")  # 5
    return session


async def test_context_is_the_matched_message_with_one_neighbour_each_side() -> None:
    references = SessionReferences(FakeSessions.of(long_session()))
    context = await references.message_context("s", 3)
    assert (context.position, context.total) == (3, 5)
    assert [(m.seq, m.role, m.matched) for m in context.messages] == [
        (1, "assistant", False),
        (3, "user", True),
        (4, "assistant", False),
    ]
    assert len(context.messages[2].text) == CONTEXT_TEXT_CHARS


async def test_context_at_the_first_message_has_no_earlier_neighbour() -> None:
    context = await SessionReferences(FakeSessions.of(long_session())).message_context("s", 0, around=2)
    assert [m.seq for m in context.messages] == [0, 1, 3]


async def test_a_message_compacted_away_has_no_position_and_shows_where_it_stood() -> None:
    session = long_session()
    session.checkpoint("summary of it all", 0, 3)  # 6 replaces seqs 0..3
    context = await SessionReferences(FakeSessions.of(session)).message_context("s", 3)
    assert context.position is None
    # The checkpoint that replaced it stands where it stood (surface order 6, 4, 5).
    assert [(m.seq, m.checkpoint, m.matched) for m in context.messages] == [(6, True, False)]
    assert context.total == 3


async def test_context_read_errors_propagate() -> None:
    sessions = FakeSessions.of(long_session())
    sessions.failures["s"] = OSError("gone")
    with pytest.raises(OSError):
        await SessionReferences(sessions).message_context("s", 3)
