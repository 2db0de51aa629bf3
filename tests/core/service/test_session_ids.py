"""resolve_session_id: exact ids win, unique prefixes resolve, ambiguity and absence are coded."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest
from sessionref.service.protocols import SessionRecord, SurfaceSnapshot
from sessionref.service.session_ids import (
    AMBIGUOUS_MATCHES_SHOWN,
    SESSION_ID_AMBIGUOUS,
    STORE_SESSION_NOT_FOUND,
    SessionIdError,
    resolve_session_id,
)
from sessionref.store.errors import STORE_SESSION_NOT_FOUND as STORE_CODE


class Listing:
    """A SessionQuery that only lists: resolution must not need anything else."""

    def __init__(self, *ids: str) -> None:
        self.records = [
            SessionRecord(session_id, created_at=1000 - index) for index, session_id in enumerate(ids)
        ]

    async def list_sessions(self) -> Sequence[SessionRecord]:
        return self.records

    async def read_surface(self, session_id: str) -> SurfaceSnapshot:
        raise AssertionError("resolution must not read a session")

    async def read_titles(self, session_ids: Sequence[str]) -> Mapping[str, str | None]:
        raise AssertionError("resolution must not read titles")


UUIDS = Listing("0b6f4c9e-1111", "0b6f4c9e-2222", "7a00ffee-3333", "abc", "abcd")


async def resolve(text: str, sessions: Listing = UUIDS) -> str:
    return await resolve_session_id(sessions, text)


async def test_a_unique_prefix_resolves_to_its_id() -> None:
    assert await resolve("7a") == "7a00ffee-3333"
    assert await resolve("0b6f4c9e-2") == "0b6f4c9e-2222"


async def test_an_exact_id_wins_over_longer_ids_it_starts() -> None:
    assert await resolve("abc") == "abc"
    assert await resolve("abcd") == "abcd"


async def test_an_ambiguous_prefix_lists_the_matches_most_recent_first() -> None:
    with pytest.raises(SessionIdError) as caught:
        await resolve("0b6f")
    assert caught.value.code == SESSION_ID_AMBIGUOUS
    message = caught.value.message
    assert '"0b6f" is the start of 2 session ids' in message
    assert message.index("0b6f4c9e-1111") < message.index("0b6f4c9e-2222")


async def test_an_ambiguity_lists_a_few_and_counts_the_rest() -> None:
    many = Listing(*[f"s-{index:02d}" for index in range(12)])
    with pytest.raises(SessionIdError) as caught:
        await resolve("s-", many)
    message = caught.value.message
    assert message.count('"s-') == 1 + AMBIGUOUS_MATCHES_SHOWN
    assert f"and {12 - AMBIGUOUS_MATCHES_SHOWN} more" in message


@pytest.mark.parametrize("text", ["zzz", "", "0B6F", "abcde"])
async def test_no_match_is_the_stores_not_found_code(text: str) -> None:
    with pytest.raises(SessionIdError) as caught:
        await resolve(text)
    assert caught.value.code == STORE_SESSION_NOT_FOUND == STORE_CODE


async def test_messages_quote_bounded_excerpts() -> None:
    huge = "x" * 1_000_000
    with pytest.raises(SessionIdError) as caught:
        await resolve(huge)
    assert len(caught.value.message) < 300
    long_ids = Listing("p" + "a" * 10_000, "p" + "b" * 10_000)
    with pytest.raises(SessionIdError) as caught:
        await resolve("p", long_ids)
    assert len(caught.value.message) < 600
