"""The reference service over the real embedded store: fast path equivalence and a full prepare."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from fakes import Agent
from sessionref.service.protocols import SessionRecord, SurfaceSnapshot
from sessionref.service.references import SessionReferences
from sessionref.store import open_store
from sessionref.store.spill_files import DirectorySpillStore


class GenericOnly:
    """The store seen through the plain `SessionQuery` protocol (no `search_candidates`)."""

    def __init__(self, store: Any) -> None:
        self.store = store

    async def list_sessions(self) -> Sequence[SessionRecord]:
        return await self.store.list_sessions()

    async def read_surface(self, session_id: str) -> SurfaceSnapshot:
        return await self.store.read_surface(session_id)

    async def read_titles(self, session_ids: Sequence[str]) -> Mapping[str, str | None]:
        return await self.store.read_titles(session_ids)


def user_message(text: str, number: int) -> dict[str, Any]:
    data = {
        "source": {"kind": "user"},
        "content": [{"type": "text", "text": text}],
        "role": "user",
        "id": f"m{number}",
    }
    return {"type": "user/message", "data": data, "surfaceOp": "append"}


def build_store(root: Path) -> Any:
    """A store with a target and 18 sessions over four cwds, some renamed."""
    opened = open_store(root)
    cwds = ["/work/app", "/work/other", None, "/work/app/sub"]
    opened.create_session(cwd="/work/app", session_id="target", created_at=1)
    for index in range(18):
        session_id = f"s{index:02d}"
        opened.create_session(cwd=cwds[index % 4], session_id=session_id, created_at=100 + index // 2)
        opened.append(session_id, [user_message(f"body of {session_id} mentions parsing", 0)])
        if index % 4 == 1:
            opened.rename(session_id, f"Parsing notes {index}")
    return opened


@pytest.fixture(scope="module")
def shared_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Read-only use only: shared by the discovery tests of this module."""
    opened = build_store(tmp_path_factory.mktemp("sessions"))
    yield opened
    opened.close()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Any]:
    opened = build_store(tmp_path / "sessions")
    yield opened
    opened.close()


@pytest.mark.parametrize(
    ("cwd", "text", "limit"),
    list(itertools.product(["/work/app", None], ["", "s1", "PARSING", "/work/app", "zz"], [1, 4, 50])),
)
async def test_the_store_fast_path_matches_the_generic_algorithm(
    shared_store: Any, cwd: str | None, text: str, limit: int
) -> None:
    agent = Agent("target", cwd)
    fast = await SessionReferences(shared_store).list_candidates(agent, text, limit)
    generic = await SessionReferences(GenericOnly(shared_store)).list_candidates(agent, text, limit)
    assert fast == generic


async def test_prepare_reads_a_stored_session_and_spills_beside_the_store(store: Any, tmp_path: Path) -> None:
    store.append("s03", [user_message("界" * 400, 1)])
    service = SessionReferences(
        store, {"maxReferenceBytes": 200}, spill_store=DirectorySpillStore(store.root)
    )
    result = await service.prepare_text(Agent("target", "/work/app"), "see dsh-session:InMwMyI please")
    assert result.content == [{"type": "text", "text": "see @s03 please"}]
    (record,) = result.references
    assert (record["sessionId"], record["capturedThroughSeq"], record["truncated"]) == ("s03", 1, True)
    assert record["capturedFormatVersion"] == store_format_version(store, "s03")
    prompt = result.additional_context["content"][0]["text"] if result.additional_context else ""
    notice = json.loads(prompt.rsplit("\n", 1)[1])[0]
    assert Path(notice["fullSnapshot"]["locator"]).is_file()
    before = [record.id for record in await store.list_sessions()]
    store.refresh()
    assert [record.id for record in await store.list_sessions()] == before, "spill files are not sessions"


def store_format_version(store: Any, session_id: str) -> int:
    for log in Path(store.root).rglob("session.jsonl"):
        header = json.loads(log.read_text("utf-8").split("\n", 1)[0])
        if header["id"] == session_id:
            return header["version"]
    raise AssertionError(f"no log for {session_id}")
