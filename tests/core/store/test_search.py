"""`search_candidates` must return exactly what the generic §6.1 algorithm returns."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from sessionref.service.candidates import find_candidates
from sessionref.service.protocols import SessionRecord, SurfaceSnapshot
from sessionref.store import SessionStore, open_store, session_writes
from sessionref.store.search import CandidateIndex
from store_fixtures import mark_as_ours

CWDS = ["/w/app", "/w/App", "/w/other", "/srv/Σίσυφος", None, "/w/app/sub"]
WORDS = ["fix", "Parser", "ΣΊΣΥΦΟΣ", "app", "\x00nul", "w/", "-", "idx", "ẞtraße", "İstanbul", "日本", "x"]


@dataclass
class Listing:
    """The store's listing and titles as a plain `SessionQuery`: the generic algorithm's input."""

    records: list[SessionRecord]
    titles: dict[str, str | None]

    async def list_sessions(self) -> Sequence[SessionRecord]:
        return self.records

    async def read_surface(self, session_id: str) -> SurfaceSnapshot:
        raise AssertionError("discovery never reads a log")

    async def read_titles(self, session_ids: Sequence[str]) -> Mapping[str, str | None]:
        return {session_id: self.titles.get(session_id) for session_id in session_ids}


async def generic(
    records: list[SessionRecord],
    titles: dict[str, str | None],
    exclude_id: str,
    target_cwd: str | None,
    needle: str,
    limit: int,
) -> list[tuple[SessionRecord, str]]:
    """The service's generic algorithm (the one definition of a match) over the same listing."""
    found = await find_candidates(
        Listing(records, titles), agent_id=exclude_id, agent_cwd=target_cwd, text=needle, limit=limit
    )
    by_id = {record.id: record for record in records}
    return [(by_id[candidate.session_id], candidate.label) for candidate in found]


def build_store(root: Path, rng: random.Random, count: int) -> SessionStore:
    for number in range(count):
        cwd = rng.choice(CWDS)
        session_id = f"{rng.choice(['s', 'S', 'fix', 'Ω'])}-{number:03d}"
        header = {"type": "session", "version": 0, "id": session_id, "createdAt": rng.randrange(5)}
        if cwd is not None:
            header["cwd"] = cwd
        folder = root / f"p{number % 4}" / f"d{number}"
        folder.mkdir(parents=True)
        lines = [json.dumps(header)]
        if rng.random() < 0.7:
            title = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(1, 4)))
            lines.append(json.dumps({"type": "session/title", "seq": 0, "time": 0, "data": {"title": title}}))
        mark_as_ours(folder / "session.jsonl").write_text("\n".join(lines) + "\n")
    return open_store(root)


async def test_search_equals_generic_algorithm_on_random_stores(tmp_path: Path) -> None:
    rng = random.Random(20261130)
    needles = [
        "",
        "a",
        "app",
        "/w/app",
        "w/",
        "σ",
        "σίσυφος",
        "-0",
        "fix p",
        "\x00",
        "\x00nul",
        "ß",
        "i̇",
        "日",
        "zz",
    ]
    for trial in range(6):
        store = build_store(tmp_path / f"t{trial}", rng, 120)
        records = list(await store.list_sessions())
        titles = dict(await store.read_titles([r.id for r in records]))
        ids = [r.id for r in records]
        for _ in range(150):
            needle = rng.choice([*needles, rng.choice(ids).lower()[: rng.randrange(1, 6)]])
            exclude = rng.choice([*ids, "none"])
            target = rng.choice([*CWDS, "/nowhere"])
            limit = rng.choice([1, 3, 50, 500])
            expected = await generic(records, titles, exclude, target, needle, limit)
            got = await store.search_candidates(
                exclude_id=exclude, target_cwd=target, needle=needle, limit=limit
            )
            assert list(got) == expected, (needle, exclude, target, limit)
        store.close()


async def test_search_sees_renames_and_new_sessions(store: SessionStore) -> None:
    store.create_session(cwd="/w", session_id="a", created_at=1)
    assert await store.search_candidates(exclude_id="x", target_cwd="/w", needle="zebra", limit=5) == []
    store.rename("a", "Zebra notes")
    store.create_session(cwd=None, session_id="zebra-2", created_at=2)
    found = await store.search_candidates(exclude_id="x", target_cwd="/w", needle="zebra", limit=5)
    assert [(record.id, label) for record, label in found] == [("a", "Zebra notes"), ("zebra-2", "zebra-2")]


def test_candidate_index_with_zero_limit_and_empty_entries() -> None:
    index = CandidateIndex([])
    assert index.search(exclude_id="", target_cwd=None, needle="a", limit=5) == []
    entry = (SessionRecord("a", 1, None), "A")
    assert CandidateIndex([entry]).search(exclude_id="", target_cwd=None, needle="a", limit=0) == []


async def test_search_stays_equal_while_the_store_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Renames, new, deleted and appended-to sessions go through the overlay; typed prefixes hit the cache.

    Appends are stamped with a random clock, so an append moves its session to the front, into the
    middle (a tie broken by id) or even back: the list order and the search must follow.
    """
    rng = random.Random(7)
    monkeypatch.setattr(session_writes, "now_ms", lambda: rng.randrange(8))
    store = build_store(tmp_path / "root", rng, 150)
    created = 0
    moves: set[str] = set()

    async def compare(needle: str, target: str | None, exclude: str, limit: int) -> None:
        records = list(await store.list_sessions())
        titles = dict(await store.read_titles([r.id for r in records]))
        expected = await generic(records, titles, exclude, target, needle, limit)
        got = await store.search_candidates(exclude_id=exclude, target_cwd=target, needle=needle, limit=limit)
        assert list(got) == expected, (needle, target, exclude, limit)

    for _round in range(60):
        # The first sessions by rank alone are kept between searches: a change must drop them.
        await compare("", "/w/app", "none", 50)
        ids = [record.id for record in await store.list_sessions()]
        action = rng.randrange(4)
        if action == 0:
            store.rename(
                rng.choice(ids), " ".join(rng.choice([*WORDS[:-3], "zebra"]) for _ in range(2)) or "t"
            )
        elif action == 1:
            created += 1
            cwd = rng.choice(CWDS)
            store.create_session(cwd=cwd, session_id=f"new-{created}", created_at=rng.randrange(6))
        elif action == 2 and len(ids) > 10:
            store.delete_session(rng.choice(ids))
        else:
            target_id = rng.choice(ids)
            message = {"source": {"kind": "user"}, "content": [{"type": "text", "text": "zebra crossing"}]}
            before = store.record(target_id).last_activity
            event = {"type": "user/message", "data": message, "surfaceOp": "append"}
            stamp = store.append(target_id, [event])[0]["time"]
            assert store.record(target_id).last_activity == stamp
            moves.add("back" if stamp < before else "same" if stamp == before else "up")
        await compare("", "/w/app", "none", 50)
        query = rng.choice(["zebra", "fix parser", "new-1", "/w/app", "s-0", "σί"])
        target = rng.choice(CWDS)
        exclude = rng.choice([*ids, "none"])
        for length in range(len(query) + 1):
            await compare(query[:length], target, exclude, rng.choice([2, 50]))
    assert moves == {"back", "same", "up"}
    fresh = open_store(store.root)
    assert await fresh.list_sessions() == await store.list_sessions()
    ids = [record.id for record in await store.list_sessions()]
    assert await fresh.read_titles(ids) == await store.read_titles(ids)
    fresh.close()
    store.close()
