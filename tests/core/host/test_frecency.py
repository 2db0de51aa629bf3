"""Frecency (`host.frecency`): sessions mentioned often and lately come right after the folder's for
an empty or short query; the counts persist in a file of the store, safely."""

from __future__ import annotations

from pathlib import Path

from sessionref.contract.uri import SessionReference, format_session_reference_mention
from sessionref.host.frecency import FRECENCY_FILE_NAME, Frecency, frecency_score
from sessionref.host.workspace import Workspace
from sessionref.models import DemoModel
from sessionref.store import SessionStore

HERE = "/home/ana/app"
NOW = 1_800_000_000_000
HOUR = 3_600_000


def seed(store: SessionStore) -> None:
    """Here: s-0, s-2; elsewhere: s-1 (oldest), s-3, s-4 (newest)."""
    for index, cwd in enumerate([HERE, "/srv/one", HERE, "/srv/two", "/srv/three"]):
        store.create_session(cwd=cwd, session_id=f"s-{index}", created_at=1_700_000_000_000 + index)


def test_recent_mentions_weigh_more_than_old_ones() -> None:
    assert frecency_score(1, NOW - HOUR // 2, NOW) > frecency_score(1, NOW - 2 * HOUR, NOW)
    assert frecency_score(1, NOW - 2 * HOUR, NOW) > frecency_score(1, NOW - 3 * 24 * HOUR, NOW)
    assert frecency_score(1, NOW - 3 * 24 * HOUR, NOW) > frecency_score(1, NOW - 30 * 24 * HOUR, NOW)
    assert frecency_score(9, NOW - 30 * 24 * HOUR, NOW) > frecency_score(1, NOW - 3 * 24 * HOUR, NOW)  # often


def test_counts_persist_across_loads_and_a_garbled_file_is_empty(tmp_path: Path) -> None:
    frecency = Frecency.load(tmp_path)
    frecency.record(["s-1", "s-1", "s-3"], NOW)  # one message mentioning s-1 twice counts once
    frecency.record(["s-1"], NOW)
    again = Frecency.load(tmp_path)
    assert again.score("s-1", NOW) == 2 * again.score("s-3", NOW) > 0
    (tmp_path / FRECENCY_FILE_NAME).write_text('{"s-1": ["x", 1], "s-2": [1, 2]')
    assert Frecency.load(tmp_path).known == 0
    (tmp_path / FRECENCY_FILE_NAME).write_text('{"s-1": ["x", 1], "s-2": [1, 2]}')
    assert Frecency.load(tmp_path).known == 1  # a malformed entry is dropped, the rest kept


async def test_a_mentioned_session_comes_right_after_the_folders_for_an_empty_query(
    store: SessionStore,
) -> None:
    seed(store)
    workspace = Workspace(store, DemoModel(pace=0), cwd=HERE)
    before = [c.session_id for c in await workspace.candidates(None, "", 10)]
    assert before == ["s-2", "s-0", "s-4", "s-3", "s-1"]
    target = workspace.agent("s-2")
    mention = format_session_reference_mention(SessionReference("s-1", "s-1"))
    await workspace.submit(target, f"look at {mention}")
    assert [c.session_id for c in await workspace.candidates(None, "", 10)] == [
        "s-2",
        "s-0",
        "s-1",
        "s-4",
        "s-3",
    ]
    assert [c.session_id for c in await workspace.candidates(None, "", 3)] == [
        "s-2",
        "s-0",
        "s-1",
    ]  # reached for
    # a longer query keeps the contract's order
    assert [c.session_id for c in await workspace.candidates(None, "srv", 10)] == ["s-4", "s-3", "s-1"]
    # another workspace on the same store reads the counts
    other = Workspace(store, DemoModel(pace=0), cwd=HERE)
    assert [c.session_id for c in await other.candidates(None, "s", 10)][:3] == ["s-2", "s-0", "s-1"]
    await workspace.close(close_store=False)
    await other.close(close_store=False)
