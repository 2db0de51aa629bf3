"""Candidates straight from the index file: exactly the generic `list_candidates`, read-only, and
only while the index was caught up recently."""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Mapping, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from sessionref.service.candidates import find_candidates
from sessionref.service.protocols import SessionRecord, SurfaceSnapshot
from sessionref.store import SessionStore, encode_session_segment, open_store, project_key
from sessionref.store.index import INDEX_FILE_NAME
from sessionref.store.index_query import query_index

# Characters whose lower case is special: Kelvin sign -> "k", dotted I -> "i̇" (two characters),
# sharp s, final sigma, a combining mark; LIKE's own metacharacters; ASCII of both cases.
ALPHABET = "abcKkXx09-_%\\. İißΣσÜü\u212a\u0307/é"
CWDS = [None, "/home/ana/Work", "/home/ana/work", "/srv/ÜBER", "/tmp/100%_done", "/w/\u212aelvin"]


def word(rng: random.Random, length: int) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(length)).strip() or "x"


def line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def write_session(
    root: Path, rng: random.Random, session_id: str, cwd: str | None, project: str | None = None
) -> None:
    created = rng.randrange(1, 50) * 1000
    header: dict[str, Any] = {"type": "session", "version": 0, "id": session_id, "createdAt": created}
    if cwd is not None:
        header["cwd"] = cwd
    lines = [line(header)]
    seq = 0
    if rng.random() < 0.7:  # a direct prompt: its fallback title
        message = {
            "source": {"kind": "user"},
            "content": [{"type": "text", "text": word(rng, 12)}],
            "role": "user",
            "id": f"m{seq}",
        }
        lines.append(
            line(
                {
                    "type": "user/message",
                    "seq": seq,
                    "time": created + rng.randrange(0, 3) * 1000,
                    "data": message,
                    "surfaceOp": "append",
                }
            )
        )
        seq += 1
    if rng.random() < 0.4:  # a rename
        title = {"title": word(rng, 8), "messageSeqs": [], "source": {"kind": "user"}}
        lines.append(
            line(
                {
                    "type": "session/title",
                    "seq": seq,
                    "time": created + rng.randrange(0, 5) * 1000,
                    "data": title,
                }
            )
        )
    folder = root / (project or project_key(cwd)) / encode_session_segment(session_id)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "session.jsonl").write_text("".join(lines), "utf-8")


def random_store(root: Path, rng: random.Random) -> list[str]:
    ids = sorted({word(rng, rng.randrange(1, 6)) for _ in range(40)})
    for session_id in ids:
        write_session(root, rng, session_id, rng.choice(CWDS))
    for session_id in rng.sample(ids, 3):  # the same id again in another project folder
        write_session(root, rng, session_id, rng.choice(CWDS), project="--elsewhere--")
    broken = root / "--w--" / "broken"
    broken.mkdir(parents=True, exist_ok=True)
    (broken / "session.jsonl").write_text('{"type":"turn/start","seq":0}\n')
    return ids


class Generic:
    """The store seen only through `SessionQuery` (no `CandidateSearch`): the generic algorithm."""

    def __init__(self, store: SessionStore) -> None:
        self._store = store

    async def list_sessions(self) -> Sequence[SessionRecord]:
        return await self._store.list_sessions()

    async def read_surface(self, session_id: str) -> SurfaceSnapshot:
        return await self._store.read_surface(session_id)

    async def read_titles(self, session_ids: Sequence[str]) -> Mapping[str, str | None]:
        return await self._store.read_titles(session_ids)


def needles(rng: random.Random, ids: list[str]) -> list[str]:
    picked = ["", "%", "_", "\\", "k", "i", "\u0307", "ss", "σ", "/home", "zzz"]
    for _ in range(12):
        source = rng.choice([*ids, *(cwd for cwd in CWDS if cwd)])
        start = rng.randrange(len(source))
        picked.append(source[start : start + rng.randrange(1, 4)])
    return picked


@pytest.mark.parametrize("seed", range(12))
async def test_the_index_query_gives_exactly_the_generic_candidates(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    ids = random_store(tmp_path, rng)
    with closing(open_store(tmp_path)) as store:
        generic = Generic(store)
        for needle_text in needles(rng, ids):
            needle = needle_text.lower()
            for target in (rng.choice(CWDS), "/nowhere"):
                exclude = rng.choice([*ids, ""])
                limit = rng.choice([1, 3, 5, 50])
                expected = await find_candidates(
                    generic, agent_id=exclude, agent_cwd=target, text=needle_text, limit=limit
                )
                answer = query_index(
                    tmp_path, exclude_id=exclude, target_cwd=target, needle=needle, limit=limit, max_age=3600
                )
                assert answer is not None and answer.any_sessions
                got = [
                    (record.id, record.cwd, record.created_at, record.updated_at, label)
                    for record, label in answer.found
                ]
                want = [(c.session_id, c.cwd, c.created_at, c.updated_at, c.label) for c in expected]
                assert got == want, (needle_text, target, exclude, limit)


async def test_text_whose_lower_case_differs_outside_ascii_is_matched_as_python_does(tmp_path: Path) -> None:
    titled = {"kelvin": "\u212a-band", "istanbul": "İstanbul", "plain": "nothing here"}
    with closing(open_store(tmp_path)) as store:
        for session_id, title in titled.items():
            store.create_session(cwd="/w", session_id=session_id)
            store.rename(session_id, title)
        for needle, expected in (("k-b", ["kelvin"]), ("i\u0307st", ["istanbul"]), ("ü", [])):
            answer = query_index(tmp_path, exclude_id="", target_cwd="/w", needle=needle, limit=5, max_age=60)
            assert answer is not None and [record.id for record, _ in answer.found] == expected
            generic = await find_candidates(Generic(store), agent_id="", agent_cwd="/w", text=needle, limit=5)
            assert [candidate.session_id for candidate in generic] == expected


def test_a_stale_missing_or_foreign_index_is_not_answered_from(tmp_path: Path) -> None:
    assert query_index(tmp_path, exclude_id="", target_cwd=None, needle="", limit=5, max_age=60) is None
    write_session(tmp_path, random.Random(1), "s1", "/w")
    open_store(tmp_path).close()
    now = time.time_ns() // 1_000_000
    fresh = query_index(tmp_path, exclude_id="", target_cwd=None, needle="", limit=5, max_age=60, now_ms=now)
    assert fresh is not None and [record.id for record, _ in fresh.found] == ["s1"]
    later = now + 61_000
    stale = query_index(
        tmp_path, exclude_id="", target_cwd=None, needle="", limit=5, max_age=60, now_ms=later
    )
    assert stale is None
    index = tmp_path / INDEX_FILE_NAME
    index.write_bytes(b"not a database at all" * 100)
    assert query_index(tmp_path, exclude_id="", target_cwd=None, needle="", limit=5, max_age=60) is None


def test_text_sqlite_cannot_take_is_left_to_the_store(tmp_path: Path) -> None:
    """A command-line argument that is not UTF-8 arrives with lone surrogates: no answer, no error."""
    write_session(tmp_path, random.Random(3), "s1", "/w")
    open_store(tmp_path).close()
    for asked in ({"needle": "\udcff"}, {"target_cwd": "/w\udcff"}, {"exclude_id": "\udcff"}):
        options: dict[str, Any] = {"exclude_id": "", "target_cwd": "/w", "needle": "", **asked}
        assert query_index(tmp_path, limit=5, max_age=60, **options) is None, asked
    assert query_index(tmp_path, exclude_id="", target_cwd="/w", needle="", limit=5, max_age=60) is not None


def test_the_query_never_writes(tmp_path: Path) -> None:
    write_session(tmp_path, random.Random(2), "s1", "/w")
    open_store(tmp_path).close()

    def files() -> dict[str, bytes]:
        # SQLite's own -wal/-shm beside our index may appear (a reader of a WAL database needs them).
        return {
            str(path.relative_to(tmp_path)): path.read_bytes()
            for path in tmp_path.rglob("*")
            if path.is_file() and not path.name.endswith(("-wal", "-shm"))
        }

    before = files()
    for _ in range(3):
        assert query_index(tmp_path, exclude_id="", target_cwd="/w", needle="s", limit=5, max_age=60)
    assert files() == before


def test_sessions_written_after_the_catch_up_are_answered_at_once(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store.create_session(cwd="/w", session_id="new-one")
    store.rename("new-one", "Fresh title")
    # The writer keeps the index current: no catch-up needed to see its own writes.
    answer = query_index(tmp_path, exclude_id="", target_cwd="/w", needle="fresh", limit=5, max_age=60)
    store.close()
    assert answer is not None and [label for _, label in answer.found] == ["Fresh title"]
    assert os.path.exists(tmp_path / INDEX_FILE_NAME)
