"""Crush keeps its databases outside its root: the store accepts exactly those projects.json names."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from contextlib import closing
from pathlib import Path

from databases import crush_project, crush_root, write_projects
from histories import tree_state
from sessionref.contract.projection import project_session_conversation
from sessionref.store import open_store
from sessionref.store.foreign_state import ForeignRoot
from sessionref.store.index import INDEX_FILE_NAME
from sessionref.store.index_query import query_index

UPLOAD = "crush:5e0c7a1e-0000-4000-8000-0000000c0001"
FLAGS = "crush:5e0c7a1e-0000-4000-8000-0000000c0002"


def listed_ids(store_root: Path, sources: list[ForeignRoot]) -> set[str]:
    with closing(open_store(store_root, sources=sources)) as store:
        return {record.id for record in asyncio.run(store.list_sessions())}


def test_listed_projects_databases_are_listed_read_and_kept_in_the_index(tmp_path: Path) -> None:
    root = crush_root(tmp_path / "homes")
    project = tmp_path / "homes" / "projects" / "shop"
    before = tree_state(project)
    sources = [ForeignRoot.of("crush", root)]
    with closing(open_store(tmp_path / "store", sources=sources)) as store:
        assert store.title(UPLOAD) == "Retry the flaky upload"
        report = asyncio.run(store.read_surface_report(UPLOAD))
        texts = [item.text for item in project_session_conversation(report.snapshot)]
        assert texts[0] == "Why does the upload fail on slow links?"
    assert listed_ids(tmp_path / "store", sources) >= {UPLOAD, FLAGS}  # reopened: the index rows are used
    answer = query_index(tmp_path / "store", exclude_id="", target_cwd=str(project), needle="", limit=10,
                         max_age=60, sources=sources)  # fmt: skip
    assert answer is not None and {record.id for record, _ in answer.found} >= {UPLOAD, FLAGS}
    assert tree_state(project) == before


def test_a_project_no_longer_listed_or_turned_into_a_link_takes_its_sessions_away(tmp_path: Path) -> None:
    root = crush_root(tmp_path / "homes")
    sources = [ForeignRoot.of("crush", root)]
    assert UPLOAD in listed_ids(tmp_path / "store", sources)
    real = crush_project(tmp_path / "real")
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    write_projects(root, {"path": str(link)}, {"path": str(tmp_path / "real"), "data_dir": "../x/.crush"})
    assert not any(session_id.startswith("crush:") for session_id in listed_ids(tmp_path / "store", sources))


def test_an_index_row_naming_another_path_outside_the_root_is_refused(tmp_path: Path) -> None:
    root = crush_root(tmp_path / "homes")
    sources = [ForeignRoot.of("crush", root)]
    open_store(tmp_path / "store", sources=sources).close()
    stray = crush_project(tmp_path / "unlisted") / ".crush" / "crush.db"
    with closing(sqlite3.connect(tmp_path / "store" / INDEX_FILE_NAME)) as index:
        index.execute(
            "UPDATE foreign_sessions SET paths = ? WHERE session_id = ?", (json.dumps([str(stray)]), UPLOAD)
        )
        index.commit()
    answer = query_index(tmp_path / "store", exclude_id="", target_cwd=None, needle="", limit=10,
                         max_age=60, sources=sources)  # fmt: skip
    assert answer is not None and {record.id for record, _ in answer.found} == {FLAGS}


def test_a_change_reported_in_a_projects_crush_folder_is_walked(tmp_path: Path) -> None:
    root = crush_root(tmp_path / "homes")
    database = tmp_path / "homes" / "projects" / "shop" / ".crush" / "crush.db"
    with closing(open_store(tmp_path / "store", sources=[ForeignRoot.of("crush", root)])) as store:
        with closing(sqlite3.connect(database)) as agent:
            agent.execute("UPDATE sessions SET title = 'Upload timeouts', updated_at = updated_at + 60")
            agent.commit()
        assert store.refresh_changed([database]) is True
        assert store.title(UPLOAD) == "Upload timeouts"
