"""`query_index` with other agents' sessions: the store's answer, only for sources walked recently."""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

from foreign_fixtures import CART, FIXTURE_SESSIONS, fixture_roots, open_with, sources_of
from sessionref.service.references import SessionReferences
from sessionref.store.index import INDEX_FILE_NAME
from sessionref.store.index_query import query_index
from test_index import header, write_log


class Vantage:
    id = ""
    cwd = "/home/ana/shop"


def ask(root: Path, sources: list, needle: str = "", **options: object) -> list[str] | None:
    answer = query_index(root, exclude_id="", target_cwd="/home/ana/shop", needle=needle, limit=50,
                         max_age=60, sources=sources, **options)  # type: ignore[arg-type]  # fmt: skip
    return None if answer is None else [record.id for record, _ in answer.found]


def test_the_index_answers_like_the_store_for_every_source(tmp_path: Path) -> None:
    roots = fixture_roots(tmp_path)
    write_log(tmp_path / "store", "--home--ana--shop/own", header("own", cwd="/home/ana/shop"), [])
    with closing(open_with(tmp_path, roots)) as store:
        service = SessionReferences(store)
        for needle in ("", "cart", "codex:", "/home/ana/db", "zzz"):
            expected = [c.session_id for c in asyncio.run(service.list_candidates(Vantage(), needle, 50))]
            assert ask(tmp_path / "store", sources_of(roots), needle) == expected
    assert len(ask(tmp_path / "store", sources_of(roots)) or []) == FIXTURE_SESSIONS + 1
    assert ask(tmp_path / "store", []) == ["own"]  # no source asked: the store's own only
    assert set(ask(tmp_path / "store", sources_of(roots, "codex")) or []) - {"own"} == {
        session_id for session_id in ask(tmp_path / "store", sources_of(roots)) or []
        if session_id.startswith("codex:")
    }  # fmt: skip


def test_a_source_not_walked_recently_or_gone_makes_the_caller_open_the_store(tmp_path: Path) -> None:
    roots = fixture_roots(tmp_path)
    open_with(tmp_path, roots, "codex").close()
    assert ask(tmp_path / "store", sources_of(roots, "codex")) is not None
    assert ask(tmp_path / "store", sources_of(roots, "codex", "gemini")) is None  # gemini never walked
    later = 10**13
    assert ask(tmp_path / "store", sources_of(roots, "codex"), now_ms=later) is None
    shutil.rmtree(roots["codex"])
    assert ask(tmp_path / "store", sources_of(roots, "codex")) is None


def test_rows_whose_files_leave_the_root_are_not_answered(tmp_path: Path) -> None:
    roots = fixture_roots(tmp_path)
    open_with(tmp_path, roots, "claude-code").close()
    index = sqlite3.connect(tmp_path / "store" / INDEX_FILE_NAME)
    with index:
        outside = json.dumps(["/etc/x"])
        index.execute("UPDATE foreign_sessions SET paths = ? WHERE session_id = ?", (outside, CART))
    index.close()
    listed = ask(tmp_path / "store", sources_of(roots, "claude-code"))
    assert listed is not None and CART not in listed and len(listed) == 3
