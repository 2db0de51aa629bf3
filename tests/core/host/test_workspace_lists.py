"""Workspace UI policy: every list of sessions comes from the reference service with a named limit."""

from __future__ import annotations

from dataclasses import replace

from sessionref.host.settings import Settings
from sessionref.host.workspace import CandidateLimits, Workspace
from sessionref.models import DemoModel
from sessionref.service.config import SessionReferenceConfig
from sessionref.store import SessionStore

HERE = "/home/ana/app"


def seed(store: SessionStore) -> list[str]:
    """Five sessions, oldest first: three here, one elsewhere, one without a cwd."""
    cwds = [HERE, "/srv/other", HERE, None, HERE]
    ids = []
    for index, cwd in enumerate(cwds):
        record = store.create_session(cwd=cwd, session_id=f"s-{index}", created_at=1_700_000_000_000 + index)
        ids.append(record.id)
    store.rename("s-2", "Parser notes")
    return ids


async def test_a_list_seen_from_no_session_ranks_this_folder_first_and_leaves_nothing_out(
    store: SessionStore,
) -> None:
    seed(store)
    workspace = Workspace(store, DemoModel(pace=0), cwd=HERE)
    found = await workspace.candidates(None, "", 10)
    # s-2 was renamed last, so it was active last
    assert [candidate.session_id for candidate in found] == ["s-2", "s-4", "s-0", "s-3", "s-1"]
    assert [candidate.same_workspace for candidate in found] == [True, True, True, False, False]


async def test_a_list_seen_from_a_session_leaves_it_out_and_is_the_stores_ranking(
    store: SessionStore,
) -> None:
    seed(store)
    workspace = Workspace(store, DemoModel(pace=0), cwd="/elsewhere")
    agent = workspace.agent("s-4")
    found = await workspace.candidates(agent, "", 3)
    direct = await store.search_candidates(exclude_id="s-4", target_cwd=HERE, needle="", limit=3)
    assert [(c.session_id, c.label) for c in found] == [(r.id, label or r.id) for r, label in direct]
    assert [c.session_id for c in await workspace.candidates(agent, "PARSER", 3)] == ["s-2"]


async def test_the_mention_menus_use_the_configured_candidate_limit(store: SessionStore) -> None:
    seed(store)
    settings = Settings(store_root=store.root, references=SessionReferenceConfig(candidate_limit=2))
    workspace = Workspace(store, DemoModel(pace=0), cwd=HERE, settings=settings)
    assert workspace.limits.mention is None
    assert len(await workspace.candidates(None, "", workspace.limits.mention)) == 2
    workspace.limits = replace(workspace.limits, mention=4)
    assert len(await workspace.candidates(None, "", workspace.limits.mention)) == 4


def test_every_list_has_a_named_limit() -> None:
    limits = CandidateLimits()
    assert (limits.mention, limits.session_list, limits.sidebar, limits.switcher) == (None, 20, 200, 30)
