"""Workspace: the mention source it hands a UI (conversation search from the session on screen,
waiting for the workspace to open), the search started by the UI and closed with the workspace."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from sessionref.agent import Agent
from sessionref.host.mention_source import MentionSource
from sessionref.host.ui_policy import DraftSession
from sessionref.host.workspace import Workspace
from sessionref.models import DemoModel
from sessionref.service.abort import AbortSignal
from sessionref.store import open_store
from sessionref.textsearch.store_index import StoreConversationIndex

HERE = "/home/ana/app"


def said(text: str) -> dict[str, object]:
    data = {
        "source": {"kind": "user"},
        "content": [{"type": "text", "text": text}],
        "role": "user",
        "id": text,
    }
    return {"type": "user/message", "data": data, "surfaceOp": "append"}


async def test_search_from_a_session_leaves_it_out_and_ranks_its_folder(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    for session_id, cwd in (("mine", HERE), ("here", HERE), ("there", "/srv/other")):
        store.create_session(cwd=cwd, session_id=session_id)
        store.append(session_id, [said(f"the flaky parser test in {session_id}")])
    workspace = Workspace(store, DemoModel(pace=0), cwd=HERE, conversations=StoreConversationIndex(store))
    assert workspace.conversations is not None
    target: Agent | DraftSession | None = None
    source = workspace.mention_source(lambda: target)
    before = await source.conversations("flaky parser", AbortSignal())
    assert before is not None and before.status == "indexing"  # not started: not built yet
    workspace.start_conversation_search()
    await asyncio.to_thread(workspace.conversations.drain, 30)
    target = workspace.agent("mine")  # the session on screen changed: the same source follows it
    found = await source.conversations("flaky parser", AbortSignal())
    assert found is not None
    assert {match.session_id: match.same_workspace for match in found.matches} == {
        "here": True,
        "there": False,
    }
    target = None
    workspace.limits = replace(workspace.limits, said=1)
    seen_from_nowhere = await source.conversations("flaky parser", AbortSignal())
    assert seen_from_nowhere is not None and len(seen_from_nowhere.matches) == 1
    assert await source.conversations("  ", AbortSignal()) is None  # a bare `@`: no such group
    await workspace.close()
    assert workspace.conversations.status.phase == "closed"


async def test_without_a_conversation_index_the_search_says_it_is_unavailable(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    workspace = Workspace(store, DemoModel(pace=0), cwd=HERE)
    workspace.start_conversation_search()  # nothing to start
    found = await workspace.mention_source(lambda: None).conversations("anything", AbortSignal())
    assert found is not None and (found.matches, found.status) == ((), "off")
    await workspace.close()


async def test_a_source_made_before_its_workspace_opens_waits_for_it(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store.create_session(cwd=HERE, session_id="other")
    opened: list[Workspace] = []
    ready = asyncio.Event()
    source = MentionSource(lambda: opened[0], lambda: None, ready=ready)
    lookup = asyncio.create_task(source.candidates("oth", AbortSignal()))
    await asyncio.sleep(0)  # one turn of the loop: the lookup is parked on `ready`
    assert not lookup.done()
    opened.append(Workspace(store, DemoModel(pace=0), cwd=HERE))
    ready.set()
    assert [candidate.session_id for candidate in await lookup] == ["other"]
    await opened[0].close()


async def test_a_lookup_cancelled_while_waiting_never_reaches_the_workspace(tmp_path: Path) -> None:
    asked: list[str] = []

    def workspace() -> Workspace:
        asked.append("workspace")
        raise AssertionError("a cancelled lookup must not ask for the workspace")

    ready = asyncio.Event()
    lookup = asyncio.create_task(
        MentionSource(workspace, lambda: None, ready=ready).candidates("x", AbortSignal())
    )
    await asyncio.sleep(0)
    lookup.cancel()
    ready.set()
    await asyncio.gather(lookup, return_exceptions=True)
    assert lookup.cancelled() and asked == []


async def test_prepared_lookups_leave_a_close_title_pass_nothing_to_compute(tmp_path: Path) -> None:
    from sessionref.service.fuzzy_titles import title_key

    store = open_store(tmp_path)
    titles = ["Fix flaky retry test in payments", "Postgres 16 migration plan", "Speed up CI"]
    for number, title in enumerate(titles):
        store.create_session(cwd=HERE, session_id=f"s{number}")
        store.rename(f"s{number}", title)
    workspace = Workspace(store, DemoModel(pace=0), cwd=HERE)
    source = workspace.mention_source(lambda: None)
    title_key.cache_clear()
    assert await source.prepare() == len(titles)
    computed = title_key.cache_info().misses
    found = await source.candidates("pg16plan", AbortSignal())  # no exact match: the close-title pass
    assert [candidate.label for candidate in found] == ["Postgres 16 migration plan"]
    assert title_key.cache_info().misses == computed  # every title it scored was ready
    await workspace.close()
