"""A database-backed source in the store: listed by its own timestamps, skipped (not fatal) if unreadable."""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from pathlib import Path

from databases import opencode_root
from histories import tree_state
from sessionref.store import open_store
from sessionref.store.foreign_state import ForeignRoot

PAY = "opencode:ses_01JQAAAAAAAAAAAAAAAAAAAAA1"


def test_database_sessions_are_listed_and_follow_the_databases_changes(tmp_path: Path) -> None:
    root = opencode_root(tmp_path / "homes")
    sources = [ForeignRoot.of("opencode", root)]
    with closing(open_store(tmp_path / "store", sources=sources)) as store:
        assert store.title(PAY) == "Flaky payment test"
        with closing(sqlite3.connect(root / "opencode.db")) as agent:
            agent.execute(
                "UPDATE session SET title = 'Clock in payment tests', time_updated = time_updated + 5"
            )
            agent.commit()
        before = tree_state(root)
        store.refresh()
        assert store.title(PAY) == "Clock in payment tests"
    assert tree_state(root) == before


def test_an_unreadable_database_skips_the_source_with_a_warning(tmp_path: Path) -> None:
    root = opencode_root(tmp_path / "homes")
    (root / "opencode.db").write_bytes(b"not a database at all" * 50)
    sources = [ForeignRoot.of("opencode", root)]
    with closing(open_store(tmp_path / "store", sources=sources)) as store:
        (count,) = store.sources()
        assert (
            count.sessions == 0 and count.problem is not None and "cannot read the database" in count.problem
        )
        (root / "opencode.db").unlink()
        opencode_root(tmp_path / "homes")  # the agent wrote it anew
        os.utime(root / "opencode.db", ns=(1, 1))
        store.refresh()
        (count,) = store.sources()
        assert count.sessions == 2 and count.problem is None
